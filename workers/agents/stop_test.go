package agents

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// stopAgent runs an exec agent until pidFile appears, then cancels it (or
// lets timeout end it) and returns what Run returned and how long Run took
// after the cancel.
func stopAgent(t *testing.T, command, pidFile string, timeout time.Duration) (error, time.Duration) {
	t.Helper()
	a := Agent{Kind: AgentExec, Command: command, Timeout: timeout}
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
