//go:build unix

package workers

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A process that left the group (setsid) and still holds stdout does not
// keep Run waiting once the agent itself has exited, and does not outlive
// the agent either.
func TestExternalEscapedProcessDoesNotBlock(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "escaped")
	command := `setsid bash -c 'echo $$ > ` + pidFile + `; exec sleep 300' & ` +
		`while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done; echo bye`
	start := time.Now()
	out, _ := runAgentProcess(t, command, "", false)
	took := time.Since(start)
	pid := waitForPID(t, pidFile)
	alive := ProcessAlive(pid)
	syscall.Kill(pid, syscall.SIGKILL) // in case the test fails
	if out != "bye\n" {
		t.Fatalf("output %q", out)
	}
	// Waiting for the escaped process would take its 300 s: seconds
	// catch that and leave a loaded machine its slack.
	if took > 5*time.Second {
		t.Fatalf("Run waited %s for a process outside the group", took)
	}
	if alive {
		t.Fatalf("the escaped process %d outlived the agent", pid)
	}
}

// TestExecEscapedChildDoesNotHang covers a process that leaves the group
// (setsid) while holding the output pipe: it cannot be killed as part of
// the group, but it must not keep the call waiting either.
func TestExecEscapedChildDoesNotHang(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not available")
	}
	w := newTestWorkspace(t, Options{})
	start := time.Now()
	res := w.Exec(context.Background(), "setsid sh -c 'echo $$ > escaped; exec sleep 30' & while [ ! -s escaped ]; do sleep 0.01; done; echo done", time.Minute, true)
	escaped := waitForPID(t, filepath.Join(w.Root(), "escaped"))
	defer syscall.Kill(escaped, syscall.SIGKILL)
	// Waiting for the escaped child would take its 30 s: ten catch that
	// and leave a busy machine its slack (the whole suite took 2.1 s).
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("call took %v with an escaped child holding the pipe", d)
	}
	if res.IsError || res.Output != "done\n" {
		t.Fatalf("result %+v", res)
	}
}
