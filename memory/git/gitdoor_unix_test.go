//go:build unix

package git

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestSeedIndexDoesNotWaitOnAFIFO: a FIFO at .git/index (nobody writes
// it) neither hangs the checkpoint nor the looks at the index.
func TestSeedIndexDoesNotWaitOnAFIFO(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs on Windows")
	}
	dir := repo(t)
	r := open(t, dir)
	index := filepath.Join(r.GitDir, "index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(index, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	cps := NewCheckpoints(r, "s1", filepath.Join(dir, ".ralph", "sessions", "s1", "git-index"), filepath.Join(dir, ".ralph"), "")
	done := make(chan struct{})
	go func() {
		defer close(done)
		cps.Seed()
		r.IndexIsHead()
		_, _ = r.indexTree(context.Background())
		_ = indexMentions(r.GitDir, "x")
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("ralph waited on a FIFO at .git/index")
	}
}
