package workers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// quickStop shortens the waits between the stop signals for a test.
func quickStop(t *testing.T, d time.Duration) {
	old := stopSteps
	stopSteps = []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, d}, {syscall.SIGTERM, d}}
	t.Cleanup(func() { stopSteps = old })
}

// stopAgent runs an exec agent until pidFile appears, then cancels it (or
// lets timeout end it) and returns what Run returned and how long Run took
// after the cancel.
func stopAgent(t *testing.T, command, pidFile string, timeout time.Duration) (error, time.Duration) {
	t.Helper()
	a := ExternalAgent{Kind: AgentExec, Command: command, Timeout: timeout}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan time.Time, 1)
	go func() {
		fileAppears(pidFile)
		stopped <- time.Now()
		if timeout == 0 {
			cancel()
		}
	}()
	_, _, err := runAgent(t, ctx, a, "")
	return err, time.Since(<-stopped)
}

// An agent that cleans up on SIGINT gets to do it: the signal comes first,
// and SIGKILL only if it has not exited after the wait.
func TestExternalStopSendsSIGINTFirst(t *testing.T) {
	for _, viaTimeout := range []bool{false, true} {
		dir := t.TempDir()
		pidFile, cleanup := filepath.Join(dir, "pid"), filepath.Join(dir, "cleaned")
		command := `trap 'sleep 0.05; echo done > ` + cleanup + `; exit 130' INT; echo $$ > ` + pidFile + `; while :; do sleep 0.02; done`
		timeout := time.Duration(0)
		if viaTimeout {
			timeout = 500 * time.Millisecond
		}
		err, took := stopAgent(t, command, pidFile, timeout)
		if viaTimeout && !errors.Is(err, ErrAgentTimeout) || !viaTimeout && !errors.Is(err, context.Canceled) {
			t.Fatalf("timeout %v: err = %v", viaTimeout, err)
		}
		if data, _ := os.ReadFile(cleanup); string(data) != "done\n" {
			t.Fatalf("timeout %v: the agent's SIGINT cleanup did not run (took %s)", viaTimeout, took)
		}
		if took > 2*time.Second {
			t.Fatalf("timeout %v: Run took %s after the stop", viaTimeout, took)
		}
	}
}

// An agent that ignores SIGINT gets SIGTERM after the wait, and one that
// ignores both is killed after the second wait.
func TestExternalStopEscalates(t *testing.T) {
	quickStop(t, 200*time.Millisecond)
	dir := t.TempDir()
	pidFile, term := filepath.Join(dir, "pid"), filepath.Join(dir, "term")
	command := `trap '' INT; trap 'echo term > ` + term + `; exit 143' TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.02; done`
	err, took := stopAgent(t, command, pidFile, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(term); string(data) != "term\n" || took < 200*time.Millisecond {
		t.Fatalf("no SIGTERM after the SIGINT wait (took %s)", took)
	}

	pidFile = filepath.Join(dir, "pid2")
	command = `trap '' INT TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.02; done`
	err, took = stopAgent(t, command, pidFile, 0)
	if !errors.Is(err, context.Canceled) || took < 400*time.Millisecond || took > 3*time.Second {
		t.Fatalf("err = %v after %s; want SIGKILL after both waits", err, took)
	}
	if pid := waitForPID(t, pidFile); processAlive(pid) {
		t.Fatalf("agent %d survived SIGKILL", pid)
	}
}
