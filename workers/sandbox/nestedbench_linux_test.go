//go:build linux

package sandbox

import (
	"context"
	"syscall"
	"testing"
)

// BenchmarkCommand10kWith20Repos is a whole command (`true`) under
// workspace-write in a project of 10,000 files and 20 nested
// repositories: start, wait, reap and the guards after it.
func BenchmarkCommand10kWith20Repos(b *testing.B) {
	root := project10k(b)
	r := NewRunner(&Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{b.TempDir()}})
	defer r.Close()
	for b.Loop() {
		proc, err := r.Start(context.Background(), Command{Path: "/bin/true", Args: []string{"true"}, Dir: root})
		if err != nil {
			b.Fatal(err)
		}
		<-proc.Exited()
		syscall.Kill(-proc.Pid, syscall.SIGKILL)
		if _, o := proc.Wait(); o.Err != nil || len(o.Undone) != 0 {
			b.Fatal(o)
		}
	}
}
