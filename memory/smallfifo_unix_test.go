//go:build unix

package memory

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// TestSmallFilesReadHereDoNotWaitOnAFIFO: the package's small reads (a
// state file, a marker file of detection, a session's image) go through
// the one small reader, so a FIFO put in a file's place is refused at
// once instead of waiting for a writer forever.
func TestSmallFilesReadHereDoNotWaitOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := conversation.NewImage("shot.png", "image/png", []byte("\x89PNG\r\n\x1a\nbytes"), 2, 1)
	for _, name := range []string{GoalsFile, "Makefile", filepath.FromSlash(img.Ref)} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
	}
	door, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = door.Close() })
	within := func(what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s waited on a FIFO", what)
		}
	}
	within("LoadStateDocs", func() {
		if docs, err := LoadStateDocs(nil, door, dir, 1<<10, 1<<10); err != nil || len(docs) != 0 {
			t.Errorf("a FIFO named RALPH_GOALS.md: %+v, %v; want it left out", docs, err)
		}
	})
	within("DetectProject", func() { DetectProject(door, dir) })
	within("loadImages", func() {
		ref := img
		ref.Data = nil // as a record read back names it, without its bytes
		msgs := []conversation.Message{{Role: conversation.RoleTool, Images: []conversation.Image{ref}}}
		loadImages(door, dir, msgs)
		if msgs[0].Images[0].Data != nil {
			t.Error("a FIFO in an image's place gave it bytes")
		}
	})
}
