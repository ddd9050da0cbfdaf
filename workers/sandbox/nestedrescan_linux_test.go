package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The nested guard looks again only at the directories whose entries
// changed, and lists one of them only when its link count says a
// directory in it may be new (subdirsKnown): a file added at the top
// costs no listing, and whatever way a command makes a directory that
// holds a repository, the guard still finds the repository and takes its
// program keys back.
func TestNestedGuardListsOnlyWhenADirectoryMayBeNew(t *testing.T) {
	for _, base := range []string{"", "/dev/shm"} { // ext4 or the like, and tmpfs
		if base != "" {
			if _, err := os.Stat(base); err != nil {
				continue
			}
		}
		t.Run(strconv.Quote(base), func(t *testing.T) {
			root := tempIn(t, base)
			gitInit(t, root)
			mkdirs(t, root, "known/deep", "gone", "moved")
			for i := range 50 {
				writeText(t, filepath.Join(root, "f"+strconv.Itoa(i)), "x")
			}
			g := newNestedGuard(root)
			g.prime()
			if _, ok := dirLinks(root, lstat(t, root)); !ok {
				t.Skipf("%s: its file system's link counts are not trusted; the guard lists", root)
			}
			listed := func(f func()) int {
				t.Helper()
				before := g.listed
				f()
				if us := g.check(); len(us) != 0 {
					t.Fatalf("undone %v after a change that made no repository", us)
				}
				return g.listed - before
			}
			// Files added: no directory is listed, however many looks.
			for i := range 3 {
				if n := listed(func() { writeText(t, filepath.Join(root, "new"+strconv.Itoa(i)), "x") }); n != 0 {
					t.Errorf("a file added: %d directories listed, want none", n)
				}
			}
			// A directory added: its parent is listed.
			if n := listed(func() { mkdirs(t, root, "added") }); n == 0 {
				t.Error("a directory added: its parent was not listed")
			}

			// Each way of making a repository in a directory the guard
			// has not seen is found.
			ways := map[string]func(){
				"a new directory deep down": func() {
					mkdirs(t, root, "a/b/c")
					gitInit(t, filepath.Join(root, "a/b/c"), "core.fsmonitor", "evil")
				},
				"a directory removed and another made": func() {
					if err := os.Remove(filepath.Join(root, "gone")); err != nil {
						t.Fatal(err)
					}
					mkdirs(t, root, "instead/x")
					gitInit(t, filepath.Join(root, "instead/x"), "core.fsmonitor", "evil")
				},
				"a directory renamed": func() {
					gitInit(t, filepath.Join(root, "outside-then"), "core.fsmonitor", "evil")
					if err := os.Rename(filepath.Join(root, "moved"), filepath.Join(root, "renamed")); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(filepath.Join(root, "outside-then"), filepath.Join(root, "renamed", "r")); err != nil {
						t.Fatal(err)
					}
				},
				"a repository in a known directory": func() {
					gitInit(t, filepath.Join(root, "known/deep"), "core.fsmonitor", "evil")
				},
				"a .git file in a known directory": func() {
					gitInit(t, filepath.Join(root, "known/gd"), "core.fsmonitor", "evil")
					writeText(t, filepath.Join(root, "known/.git"), "gitdir: gd/.git\n")
				},
			}
			for name, make := range ways {
				make()
				us := g.check()
				if len(us) == 0 {
					t.Errorf("%s: the repository's program key was not taken back", name)
				}
			}
		})
	}
}

func tempIn(t *testing.T, base string) string {
	t.Helper()
	if base == "" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(base, "nested-rescan-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lstat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
