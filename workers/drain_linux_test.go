package workers

// The drain's tests live here: it asks the kernel what a pipe still holds
// (FIONREAD) only on Linux, and the flood test signals a pid directly.

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecOutputReadLateIsKept: on a busy machine the reader of a
// command's output may run long after the command ended, past the grace
// the drain gives a pipe that an escaped process holds. What the command
// printed is still in the pipe then, and is the result; the suite's busy
// run once got "(no output)" from a pwd. Not parallel: it sets the
// package's reader hook.
func TestExecOutputReadLateIsKept(t *testing.T) {
	readerStarts = func() { time.Sleep(300 * time.Millisecond) }
	t.Cleanup(func() { readerStarts = nil })
	w := newTestWorkspace(t, Options{})
	if res := w.Exec(context.Background(), "echo late", time.Minute, true); res.IsError || res.Output != "late\n" {
		t.Fatalf("result %+v, want the output", res)
	}
}

// TestExecFloodFromALeftProcessCostsOnlyTheGrace: the drain waits for
// what the command's own group wrote, not for a process that left the
// group and keeps the pipe full: that one costs the grace, as before,
// not the drain's whole limit. The call is measured against the same
// command without the flood, run just before it: in the busy suite under
// -race the flooded call alone took 2.5 s, past the limit, while what
// the drain added was a fraction of it.
func TestExecFloodFromALeftProcessCostsOnlyTheGrace(t *testing.T) {
	t.Parallel()
	w := newTestWorkspace(t, Options{})
	start := time.Now()
	if res := w.Exec(context.Background(), `sh -c 'echo $$ > quiet.pid' & sleep 0.3; echo done`, time.Minute, true); res.IsError {
		t.Fatalf("result %.200q", res.Output)
	}
	quiet := time.Since(start)
	pidFile := filepath.Join(w.Root(), "yes.pid")
	start = time.Now()
	res := w.Exec(context.Background(), `setsid sh -c 'echo $$ > yes.pid; exec yes' & sleep 0.3; echo done`, time.Minute, true)
	took := time.Since(start)
	if data, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if res.IsError {
		t.Fatalf("result %.200q", res.Output)
	}
	if took-quiet > drainLimit*3/4 {
		t.Fatalf("the call took %v against %v without the flood, near the drain's limit %v: it waited for the flood", took, quiet, drainLimit)
	}
}
