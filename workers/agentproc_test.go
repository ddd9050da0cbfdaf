package workers

import (
	"bytes"
	"os"
	"os/exec"
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

// runAgentProcess runs command under bash as an agent's process, its
// output collected. With stop set, it is stopped as a cancelled agent is
// once pidFile holds a pid; otherwise it runs until it exits. It returns
// the output and how long the stop took.
func runAgentProcess(t *testing.T, command, pidFile string, stop bool) (string, time.Duration) {
	t.Helper()
	var out bytes.Buffer
	p, err := StartAgent(exec.Command("bash", "-c", command), "", func(b []byte) { out.Write(b) }, func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	var roots AgentProcs
	if stop {
		waitForPID(t, pidFile)
		roots = p.Processes()
		start := time.Now()
		p.Interrupt()
		FinishAgent(p, p.OutputDone(), nil, true, 250*time.Millisecond, roots)
		return out.String(), time.Since(start)
	}
	<-p.Exited()
	FinishAgent(p, p.OutputDone(), nil, false, 250*time.Millisecond, roots)
	return out.String(), 0
}

// An agent that ignores SIGINT gets SIGTERM after the wait, and one that
// ignores both is killed after the second wait.
func TestExternalStopEscalates(t *testing.T) {
	quickStop(t, 200*time.Millisecond)
	dir := t.TempDir()
	pidFile, term := filepath.Join(dir, "pid"), filepath.Join(dir, "term")
	command := `trap '' INT; trap 'echo term > ` + term + `; exit 143' TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.02; done`
	_, took := runAgentProcess(t, command, pidFile, true)
	if data, _ := os.ReadFile(term); string(data) != "term\n" || took < 200*time.Millisecond {
		t.Fatalf("no SIGTERM after the SIGINT wait (took %s)", took)
	}

	pidFile = filepath.Join(dir, "pid2")
	command = `trap '' INT TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.02; done`
	_, took = runAgentProcess(t, command, pidFile, true)
	if took < 400*time.Millisecond || took > 3*time.Second {
		t.Fatalf("stopped after %s; want SIGKILL after both waits", took)
	}
	if pid := waitForPID(t, pidFile); ProcessAlive(pid) {
		t.Fatalf("agent %d survived SIGKILL", pid)
	}
}
