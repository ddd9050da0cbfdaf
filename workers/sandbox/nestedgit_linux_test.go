//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestNestedGuardIncludeOfAPipe: an include of a pipe that nobody writes
// makes git's reading of the repository time out; the guard must still
// take back what it can see (the include and the key beside it), not let
// them pass because the listing failed.
func TestNestedGuardIncludeOfAPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for git's timeout")
	}
	root := t.TempDir()
	gitInit(t, root)
	g := newNestedGuard(root)
	g.prime()
	gitInit(t, filepath.Join(root, "nest"), "core.fsmonitor", "evil", "include.path", "../fifo")
	if err := syscall.Mkfifo(filepath.Join(root, "nest", "fifo"), 0o644); err != nil {
		t.Skip(err)
	}
	if got := undoneMap(g.check()); got["nest/.git/config"] != "core.fsmonitor,include.path" {
		t.Errorf("undone: %v", got)
	}
}

// TestNestedGuardFIFOAtCommondirHangsNothing: a command makes a .git
// directory whose commondir (or a .git file) is a FIFO nobody writes;
// the guard's look after the command returns.
func TestNestedGuardFIFOAtCommondirHangsNothing(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	g := newNestedGuard(root)
	g.prime()
	gitInit(t, filepath.Join(root, "nest"))
	if err := syscall.Mkfifo(filepath.Join(root, "nest", ".git", "commondir"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "sub", ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); g.check() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the nested guard waited on a FIFO")
	}
}
