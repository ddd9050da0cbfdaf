package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// notWaiting runs read and fails the test if it is still waiting after
// five seconds: a FIFO opened for reading the blocking way waits for a
// writer forever.
func notWaiting(t *testing.T, what string, read func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waited on a FIFO", what)
		return nil
	}
}

// TestSmallReadersRefuseAFIFOAtOnce: every small reader, through a
// project's door and the person's, refuses a FIFO with ErrNotRegular in
// one sentence naming it, without waiting for a writer.
func TestSmallReadersRefuseAFIFOAtOnce(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fifo := filepath.Join(root, "AGENTS.md")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	door, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = door.Close() })
	readers := map[string]func(afero.Fs) error{
		"ReadSmall": func(fsys afero.Fs) error { _, err := ReadSmall(fsys, fifo, 1<<20); return err },
		"ReadSmallInto": func(fsys afero.Fs) error {
			_, _, err := ReadSmallInto(fsys, fifo, 1<<20, nil)
			return err
		},
		"ReadHead": func(fsys afero.Fs) error { _, err := ReadHead(fsys, fifo, 1<<20); return err },
		"OpenSmall": func(fsys afero.Fs) error {
			f, _, err := OpenSmall(fsys, fifo)
			if err == nil {
				_ = f.Close()
			}
			return err
		},
	}
	for name, read := range readers {
		for doorName, fsys := range map[string]afero.Fs{"project": door, "person": Person()} {
			err := notWaiting(t, name, func() error { return read(fsys) })
			var nr *NotRegularError
			if !errors.Is(err, ErrNotRegular) || !errors.As(err, &nr) {
				t.Errorf("%s through the %s door: %v, want ErrNotRegular", name, doorName, err)
				continue
			}
			if want := fifo + " is a named pipe (FIFO), not a regular file, so ralph did not read it"; err.Error() != want {
				t.Errorf("%s through the %s door says %q, want %q", name, doorName, err, want)
			}
		}
	}
}

// TestReadHeadCutsAndReadSmallRefuses: past its limit ReadHead returns
// the head and ReadSmall refuses the file, from its size, before reading.
func TestReadHeadCutsAndReadSmallRefuses(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	name := filepath.Join(root, "SKILL.md")
	if err := os.WriteFile(name, []byte(strings.Repeat("x", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	door, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = door.Close() })
	if data, err := ReadHead(door, name, 10); err != nil || len(data) != 10 {
		t.Errorf("ReadHead = %d bytes, %v; want 10", len(data), err)
	}
	if data, err := ReadHead(door, name, 1000); err != nil || len(data) != 100 {
		t.Errorf("ReadHead under the limit = %d bytes, %v; want 100", len(data), err)
	}
	var tl *TooLargeError
	if _, err := ReadSmall(door, name, 99); !errors.As(err, &tl) || tl.Size != 100 || tl.Limit != 99 {
		t.Errorf("ReadSmall over the limit = %v", err)
	}
	if data, err := ReadSmall(door, name, 100); err != nil || len(data) != 100 {
		t.Errorf("ReadSmall at the limit = %d bytes, %v", len(data), err)
	}
}

// TestSmallReadersKeepTheDoorsLinkRules: the small readers follow a link
// as the door they read through does: inside a project's door a link
// inside it reads and a link out of it is ErrLinkOut with nothing read;
// the person's door follows links.
func TestSmallReadersKeepTheDoorsLinkRules(t *testing.T) {
	t.Parallel()
	root, outside, door := setup(t)
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("AGENTS.md", filepath.Join(root, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(root, "out.md")); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(afero.Fs, string) ([]byte, error){
		func(fsys afero.Fs, name string) ([]byte, error) { return ReadSmall(fsys, name, 1<<10) },
		func(fsys afero.Fs, name string) ([]byte, error) { return ReadHead(fsys, name, 1<<10) },
		func(fsys afero.Fs, name string) ([]byte, error) {
			data, _, err := ReadSmallInto(fsys, name, 1<<10, make([]byte, 0, 64))
			return data, err
		},
	} {
		if data, err := read(door, filepath.Join(root, "CLAUDE.md")); err != nil || string(data) != "inside" {
			t.Errorf("a link inside the project: %q, %v", data, err)
		}
		if data, err := read(door, filepath.Join(root, "out.md")); !errors.Is(err, ErrLinkOut) || len(data) != 0 {
			t.Errorf("a link out of the project: %q, %v; want ErrLinkOut", data, err)
		}
		if data, err := read(Person(), filepath.Join(root, "out.md")); err != nil || string(data) != "home\n" {
			t.Errorf("the person's door: %q, %v", data, err)
		}
	}
}

// ReadSmallInto reads into the space it is given when that is large
// enough, into a new array when not, gives the open file's stat, and
// refuses a file over its limit as ReadSmall does.
func TestReadSmallIntoReusesItsSpace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	name := filepath.Join(root, "RALPH_TASKS.md")
	if err := os.WriteFile(name, []byte(strings.Repeat("x", 1000)), 0o640); err != nil {
		t.Fatal(err)
	}
	door, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = door.Close() })
	small := make([]byte, 0, 10)
	data, fi, err := ReadSmallInto(door, name, 1000, small)
	if err != nil || len(data) != 1000 || fi.Size() != 1000 || fi.Mode().Perm() != 0o640 {
		t.Fatalf("into too little space: %d bytes, %v, %v", len(data), fi, err)
	}
	again, _, err := ReadSmallInto(door, name, 1000, data[:0])
	if err != nil || string(again) != string(data) || &again[0] != &data[0] {
		t.Fatalf("into enough space: %d bytes (the same array: %v), %v", len(again), len(again) > 0 && &again[0] == &data[0], err)
	}
	var tl *TooLargeError
	if _, _, err := ReadSmallInto(door, name, 999, data[:0]); !errors.As(err, &tl) || tl.Size != 1000 {
		t.Errorf("over the limit: %v", err)
	}
}
