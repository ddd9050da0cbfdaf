package rootfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// personSetup is a cache directory a command could write, beside the
// person's home with their ~/.bashrc.
func personSetup(t *testing.T) (cache, bashrc string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	base := t.TempDir()
	cache = filepath.Join(base, "cache", "ralph")
	bashrc = filepath.Join(base, "home", ".bashrc")
	for _, d := range []string{cache, filepath.Dir(bashrc)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(bashrc, []byte("home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cache, bashrc
}

func bashrcUnchanged(t *testing.T, bashrc string) {
	t.Helper()
	if got, err := os.ReadFile(bashrc); err != nil || string(got) != "home\n" {
		t.Fatalf("~/.bashrc = %q, %v: written through the person's door", got, err)
	}
}

// TestPersonWriteReplacesLinkAtName: a link planted at the name ralph
// writes (the model-list cache) is replaced by the new file, never
// followed to the file it names.
func TestPersonWriteReplacesLinkAtName(t *testing.T) {
	cache, bashrc := personSetup(t)
	name := filepath.Join(cache, "models-0123.json")
	if err := os.Symlink(bashrc, name); err != nil {
		t.Fatal(err)
	}
	if err := memory.WriteFileAtomicUnsynced(rootfs.Person(), name, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	bashrcUnchanged(t, bashrc)
	fi, err := os.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s is %v, %v; want the new regular file", name, fi, err)
	}
	if got, _ := os.ReadFile(name); string(got) != "{}" {
		t.Fatalf("%s holds %q", name, got)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, ".*tmp*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestPersonOpenForWritingFollowsNoLink: an open that writes refuses a
// link at the name (to a file, or dangling), creates nothing through a
// dangling one, and an exclusive create fails on a planted link rather
// than following it.
func TestPersonOpenForWritingFollowsNoLink(t *testing.T) {
	cache, bashrc := personSetup(t)
	person := rootfs.Person()
	dangling := filepath.Join(filepath.Dir(bashrc), ".profile")
	for _, target := range []string{bashrc, dangling} {
		name := filepath.Join(cache, "planted-"+filepath.Base(target))
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		for _, flag := range []int{os.O_WRONLY | os.O_TRUNC, os.O_WRONLY | os.O_CREATE | os.O_TRUNC, os.O_WRONLY | os.O_APPEND, os.O_RDWR | os.O_CREATE} {
			f, err := person.OpenFile(name, flag, 0o600)
			if err == nil {
				_, _ = f.Write([]byte("planted\n"))
				_ = f.Close()
				t.Errorf("open %s (-> %s) with flag %#x: followed the link", name, target, flag)
			} else if !errors.Is(err, rootfs.ErrLink) {
				t.Errorf("open %s (-> %s) with flag %#x: %v, want ErrLink", name, target, flag, err)
			}
		}
		if f, err := person.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			_ = f.Close()
			t.Errorf("an exclusive create at a planted link %s succeeded", name)
		} else if !errors.Is(err, os.ErrExist) {
			t.Errorf("an exclusive create at a planted link: %v, want ErrExist", err)
		}
		if err := afero.WriteFile(person, name, []byte("planted\n"), 0o600); err == nil {
			t.Errorf("afero.WriteFile through %s succeeded", name)
		}
	}
	bashrcUnchanged(t, bashrc)
	if _, err := os.Lstat(dangling); !os.IsNotExist(err) {
		t.Fatalf("the dangling link's target was created: %v", err)
	}
}

// TestPersonOpenRefusesASecondName: a hard link of the person's file at
// the name ralph writes (a command may make one: the person owns both)
// is refused before anything is truncated or written; a rename over it
// leaves the person's file as it was.
func TestPersonOpenRefusesASecondName(t *testing.T) {
	cache, bashrc := personSetup(t)
	name := filepath.Join(cache, "models-0123.json")
	if err := os.Link(bashrc, name); err != nil {
		t.Skipf("no hard link here: %v", err)
	}
	person := rootfs.Person()
	if _, err := person.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0o600); !errors.Is(err, rootfs.ErrHardLink) {
		t.Errorf("open of a second name: %v, want ErrHardLink", err)
	}
	bashrcUnchanged(t, bashrc)
	if err := memory.WriteFileAtomic(person, name, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	bashrcUnchanged(t, bashrc)
}

// TestPersonWritesOrdinaryFiles: the door does not stand in the way of
// ralph's own files: create, write, append and replace work, and reads
// follow the person's own links (a stowed config directory).
func TestPersonWritesOrdinaryFiles(t *testing.T) {
	cache, _ := personSetup(t)
	person := rootfs.Person()
	name := filepath.Join(cache, "record.json")
	if err := afero.WriteFile(person, name, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := person.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte("b"))
	_ = f.Close()
	if err := afero.WriteFile(person, name, []byte("c"), 0o600); err != nil {
		t.Fatal(err)
	}
	stow := filepath.Join(filepath.Dir(cache), "stowed")
	if err := os.Symlink(cache, stow); err != nil {
		t.Fatal(err)
	}
	if err := memory.WriteFileAtomic(person, filepath.Join(stow, "record.json"), []byte("d"), 0o600); err != nil {
		t.Fatalf("a write under the person's own linked directory: %v", err)
	}
	if got, err := afero.ReadFile(person, name); err != nil || string(got) != "d" {
		t.Fatalf("read %q, %v", got, err)
	}
}
