//go:build unix

package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A file of the project that is a hard link to one of the person's
// files (a command made it) is not written in place through the door:
// not appended to, not truncated, so nothing ralph writes reaches the
// person's file.
func TestNoWriteInPlaceThroughAHardLink(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), t.TempDir()
	victim := filepath.Join(home, ".bashrc")
	if err := os.WriteFile(victim, []byte("the person's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(victim, filepath.Join(proj, "RALPH_PROGRESS.md")); err != nil {
		t.Skipf("no hard link across these directories: %v", err)
	}
	fsys, err := New(proj)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_WRONLY | os.O_APPEND, os.O_RDWR, os.O_WRONLY | os.O_CREATE | os.O_TRUNC} {
		f, err := fsys.OpenFile(filepath.Join(proj, "RALPH_PROGRESS.md"), flag, 0o644)
		if err == nil {
			f.Close()
			t.Fatalf("flag %#x: opened for writing through a hard link", flag)
		}
		if !errors.Is(err, ErrHardLink) {
			t.Fatalf("flag %#x: %v, want ErrHardLink", flag, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "the person's\n" {
		t.Fatalf("the person's file changed: %q", b)
	}
}
