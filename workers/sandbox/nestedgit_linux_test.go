//go:build linux

package sandbox

import (
	"path/filepath"
	"syscall"
	"testing"
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
