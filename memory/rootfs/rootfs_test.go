package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
)

func setup(t *testing.T) (root, outside string, f *Fs) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	base := t.TempDir()
	root = filepath.Join(base, "project")
	outside = filepath.Join(base, "home")
	for _, d := range []string{root, outside, filepath.Join(root, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "bashrc"), []byte("home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, outside, f
}

func appendTo(f afero.Fs, p string) error {
	file, err := f.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = file.Write([]byte("planted\n"))
	return errors.Join(err, file.Close())
}

func unchanged(t *testing.T, p, want string) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil || string(got) != want {
		t.Fatalf("%s = %q, %v; want %q", p, got, err, want)
	}
}

func TestWritesRefuseLinks(t *testing.T) {
	root, outside, f := setup(t)
	progress := filepath.Join(root, "RALPH_PROGRESS.md")
	cases := map[string]string{
		"out":      filepath.Join(outside, "bashrc"),
		"inside":   ".git/config",
		"dangling": filepath.Join(outside, "newfile"),
	}
	for name, target := range cases {
		_ = os.Remove(progress)
		if err := os.Symlink(target, progress); err != nil {
			t.Fatal(err)
		}
		if err := appendTo(f, progress); !errors.Is(err, ErrLink) {
			t.Errorf("%s: append through a link: %v, want ErrLink", name, err)
		}
		if err := afero.WriteFile(f, progress, []byte("x"), 0o644); !errors.Is(err, ErrLink) {
			t.Errorf("%s: write through a link: %v, want ErrLink", name, err)
		}
	}
	unchanged(t, filepath.Join(outside, "bashrc"), "home\n")
	unchanged(t, filepath.Join(root, ".git", "config"), "[core]\n")
	if _, err := os.Lstat(filepath.Join(outside, "newfile")); !os.IsNotExist(err) {
		t.Fatalf("the dangling link's target was created: %v", err)
	}
	// A directory on the way that is a link.
	if err := os.Symlink(outside, filepath.Join(root, ".ralph")); err != nil {
		t.Fatal(err)
	}
	if err := appendTo(f, filepath.Join(root, ".ralph", "bashrc")); !errors.Is(err, ErrLink) {
		t.Errorf("append under a linked directory: %v, want ErrLink", err)
	}
	if err := f.MkdirAll(filepath.Join(root, ".ralph", "sessions"), 0o755); !errors.Is(err, ErrLink) {
		t.Errorf("mkdir under a linked directory: %v, want ErrLink", err)
	}
	if err := f.Rename(filepath.Join(root, "x"), filepath.Join(root, ".ralph", "bashrc")); !errors.Is(err, ErrLink) {
		t.Errorf("rename under a linked directory: %v, want ErrLink", err)
	}
	unchanged(t, filepath.Join(outside, "bashrc"), "home\n")
}

func TestOutsideRootIsAnError(t *testing.T) {
	_, outside, f := setup(t)
	if _, err := f.Open(filepath.Join(outside, "bashrc")); !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("open outside: %v", err)
	}
	if err := appendTo(f, filepath.Join(outside, "bashrc")); !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("append outside: %v", err)
	}
	unchanged(t, filepath.Join(outside, "bashrc"), "home\n")
}

func TestReadsStayInside(t *testing.T) {
	root, outside, f := setup(t)
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("be kind"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("AGENTS.md", filepath.Join(root, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(root, "RALPH_TASKS.md")); err != nil {
		t.Fatal(err)
	}
	if data, err := afero.ReadFile(f, filepath.Join(root, "CLAUDE.md")); err != nil || string(data) != "be kind" {
		t.Fatalf("CLAUDE.md -> AGENTS.md: %q, %v", data, err)
	}
	if _, err := afero.ReadFile(f, filepath.Join(root, "RALPH_TASKS.md")); err == nil {
		t.Fatal("a link out of the project was read")
	}
}

func TestRenameReplacesLinkAndCreatesExclusive(t *testing.T) {
	root, outside, f := setup(t)
	progress := filepath.Join(root, "RALPH_PROGRESS.md")
	if err := os.Symlink(filepath.Join(outside, "bashrc"), progress); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(root, ".tmp")
	if err := afero.WriteFile(f, tmp, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(tmp, progress); err != nil {
		t.Fatal(err)
	}
	unchanged(t, progress, "new")
	unchanged(t, filepath.Join(outside, "bashrc"), "home\n")
	if err := f.Remove(progress); err != nil {
		t.Fatal(err)
	}
	if err := f.MkdirAll(filepath.Join(root, ".ralph", "sessions", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := appendTo(f, filepath.Join(root, ".ralph", "sessions", "a", "errors.jsonl")); err != nil {
		t.Fatal(err)
	}
	unchanged(t, filepath.Join(root, ".ralph", "sessions", "a", "errors.jsonl"), "planted\n")
}

func TestLinkOutIsMarked(t *testing.T) {
	root, outside, f := setup(t)
	if err := os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(root, "RALPH_TASKS.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Open(filepath.Join(root, "RALPH_TASKS.md")); !errors.Is(err, ErrLinkOut) {
		t.Fatalf("open of a link out: %v, want ErrLinkOut", err)
	}
	if _, err := f.Open(filepath.Join(root, "missing")); !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrLinkOut) {
		t.Fatalf("open of a missing file: %v", err)
	}
}

// ReadSmall refuses a directory, a file over its limit and a link out of
// the door.
func TestReadSmall(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	door, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(root, "ok.md"), []byte("hello"), 0o644)
	_ = os.WriteFile(filepath.Join(outside, "key"), []byte("SECRET"), 0o644)
	_ = os.Mkdir(filepath.Join(root, "dir.md"), 0o755)
	if data, err := ReadSmall(door, filepath.Join(root, "ok.md"), 5); err != nil || string(data) != "hello" {
		t.Fatalf("ok: %q %v", data, err)
	}
	var tooLarge *TooLargeError
	if _, err := ReadSmall(door, filepath.Join(root, "ok.md"), 4); !errors.Is(err, ErrTooLarge) || !errors.As(err, &tooLarge) ||
		err.Error() != filepath.Join(root, "ok.md")+" is 5 bytes, more than the 4 bytes ralph reads of such a file, so ralph left it as it is" {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadSmall(door, filepath.Join(root, "dir.md"), 9); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "key"), filepath.Join(root, "link.md")); err == nil {
		if data, err := ReadSmall(door, filepath.Join(root, "link.md"), 99); !errors.Is(err, ErrLinkOut) || len(data) != 0 {
			t.Errorf("link out: %q %v", data, err)
		}
	}
}

// TestOpenRegularRefusesLinksAndPipes: the strict read refuses a link at
// the file (even one that stays inside the root), a link on the way, and
// a FIFO, which it must not wait on; a regular file reads.
func TestOpenRegularRefusesLinksAndPipes(t *testing.T) {
	root, outside, f := setup(t)
	git := filepath.Join(root, ".git")
	if err := os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(git, "index")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("config", filepath.Join(git, "HEAD")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(git, filepath.Join(root, "gitlink")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{filepath.Join(git, "index"), filepath.Join(git, "HEAD"), filepath.Join(root, "gitlink", "config")} {
		if _, err := f.ReadRegular(name, 1<<20); !errors.Is(err, ErrLink) {
			t.Errorf("ReadRegular(%s) = %v, want ErrLink", name, err)
		}
	}
	fifo := filepath.Join(git, "pipe")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := f.ReadRegular(fifo, 1<<20); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadRegular(fifo) = %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadRegular waited on a FIFO")
	}
	if got, err := f.ReadRegular(filepath.Join(git, "config"), 1<<20); err != nil || string(got) != "[core]\n" {
		t.Fatalf("ReadRegular(config) = %q, %v", got, err)
	}
}

// TestRenameErrorNamesBothPaths: a rename that fails says it was a rename
// of the caller's two paths, with the system's cause, as os.Rename does;
// not "open X: renameat a b: …", an open nobody made (issue 67).
func TestRenameErrorNamesBothPaths(t *testing.T) {
	root := t.TempDir()
	f, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	from, to := filepath.Join(root, "file"), filepath.Join(root, "dir")
	if err := os.WriteFile(from, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(to, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = f.Rename(from, to)
	var le *os.LinkError
	if !errors.As(err, &le) || le.Op != "rename" || le.Old != from || le.New != to {
		t.Fatalf("err = %#v (%v), want a rename of %s to %s", err, err, from, to)
	}
	if msg := err.Error(); strings.Contains(msg, "open ") || strings.Contains(msg, "renameat") {
		t.Errorf("the message speaks of system calls: %s", msg)
	}
	want := &os.LinkError{}
	if errors.As(os.Rename(from, to), &want); !errors.Is(err, want.Err) {
		t.Errorf("cause %v, want %v as os.Rename says", le.Err, want.Err)
	}
}
