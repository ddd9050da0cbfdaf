package memory

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A record saved through its spare is whole after each save, with the
// record before it in the spare, and no save makes a new file once the
// spare exists; a link or a FIFO a command put at the spare's name is
// removed, never written through, and the save still lands: under a
// project (rootfs.New) and in the person's own directories (the
// registry's, rootfs.Person).
func TestSpareSaveExchangesAndFollowsNothing(t *testing.T) {
	for _, door := range []string{"project", "person"} {
		t.Run(door, func(t *testing.T) {
			dir := t.TempDir()
			fsys := rootfs.Person()
			if door == "project" {
				var err error
				if fsys, err = rootfs.New(dir); err != nil {
					t.Fatal(err)
				}
			}
			spareSaves(t, fsys, dir)
		})
	}
}

func spareSaves(t *testing.T, fsys afero.Fs, dir string) {
	path := filepath.Join(dir, "session.json")
	spare := sparePath(path)
	ino := func(p string) uint64 {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for i, want := range []string{"one", "two, longer", "3"} {
		if err := writeAtomicSpare(fsys, path, []byte(want), 0o644, i%2 == 0, nil); err != nil {
			t.Fatal(err)
		}
		if got := read(path); got != want {
			t.Fatalf("save %d: %q, want %q", i, got, want)
		}
	}
	if got := read(spare); got != "two, longer" {
		t.Errorf("the spare holds %q, want the record before", got)
	}
	a, b := ino(path), ino(spare)
	if err := writeAtomicSpare(fsys, path, []byte("four"), 0o644, true, nil); err != nil {
		t.Fatal(err)
	}
	if ino(path) != b || ino(spare) != a {
		t.Errorf("a save made a new file: inodes %d/%d before, %d/%d after", a, b, ino(path), ino(spare))
	}

	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, plant := range []func() error{
		func() error { return os.Symlink(outside, spare) },
		func() error { return os.Link(outside, spare) },
		func() error { return syscall.Mkfifo(spare, 0o644) },
	} {
		_ = os.Remove(spare)
		if err := plant(); err != nil {
			t.Fatal(err)
		}
		if err := writeAtomicSpare(fsys, path, []byte("five"), 0o644, true, nil); err != nil {
			t.Fatal(err)
		}
		if got := read(path); got != "five" {
			t.Errorf("with something at the spare: %q, want five", got)
		}
		if got := read(outside); got != "keep" {
			t.Fatalf("written through what was at the spare: %q", got)
		}
	}
}

// Every session updates the cross-project registry: once its spare
// exists, an update makes and frees no file.
func TestRegistryUpdatesMakeNoFile(t *testing.T) {
	dir := t.TempDir()
	r := OpenRegistry(rootfs.Person(), dir)
	ino := func(p string) uint64 {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	for i := range 2 {
		if err := r.Update(RegistryEntry{Root: filepath.Join(dir, "p", string(rune('a'+i)))}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := ino(registryFile), ino("."+registryFile+".spare")
	if err := r.Update(RegistryEntry{Root: filepath.Join(dir, "p", "c")}); err != nil {
		t.Fatal(err)
	}
	if ino(registryFile) != b || ino("."+registryFile+".spare") != a {
		t.Errorf("an update made a new file")
	}
	entries, err := r.read()
	if err != nil || len(entries) != 1 {
		// The roots do not exist, so only the one being written stays.
		t.Fatalf("entries = %v, %v", entries, err)
	}
}
