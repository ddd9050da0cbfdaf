package images

import (
	"errors"
	"image"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

func TestReadFileReadsOnlyARegularImageFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	if err := os.WriteFile(shot, encodePNG(t, image.NewRGBA(image.Rect(0, 0, 4, 3))), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := ReadFile(rootfs.Person(), shot)
	if err != nil || p.MediaType != PNG || p.Width != 4 || p.Height != 3 {
		t.Fatalf("ReadFile(shot.png) = %v %d×%d, %v", p.MediaType, p.Width, p.Height, err)
	}
	notes := filepath.Join(dir, "notes.png")
	if err := os.WriteFile(notes, []byte("text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(rootfs.Person(), notes); !errors.Is(err, ErrNotImage) {
		t.Errorf("a text file named .png: %v, want ErrNotImage", err)
	}
	if _, err := ReadFile(rootfs.Person(), filepath.Join(dir, "gone.png")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadFile(rootfs.Person(), dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v, want ErrNotRegular", err)
	}
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(rootfs.Person(), big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over the cap: %v, want ErrTooLarge", err)
	}
}

// A FIFO named like a picture would block a plain open until a writer
// came: it is refused at once.
func TestReadFileDoesNotWaitOnAFIFO(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs on Windows")
	}
	fifo := filepath.Join(t.TempDir(), "pipe.png")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(rootfs.Person(), fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("a FIFO: %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile waited on a FIFO")
	}
}
