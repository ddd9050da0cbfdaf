package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The real CLIs' stop tests: Ctrl-C to ralph leaves no process of the
// agent's behind. They find the run's processes by their environment in
// /proc, so they are Linux's.

// runProcesses lists the running processes whose environment holds env's
// HOME, a directory of the test's own: ralph and every process it or its
// agent started, but for the pid except.
func runProcesses(env []string, except int) []int {
	want := "HOME=" + envValue(env, "HOME")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == except {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && slices.Contains(strings.Split(string(data), "\x00"), want) && processRunning(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertRunLeftNothing fails when a process of the run outlived ralph,
// and kills it.
func assertRunLeftNothing(t *testing.T, env []string, agent string) {
	t.Helper()
	if left := runProcesses(env, 0); len(left) > 0 {
		for _, pid := range left {
			_ = signalProcess(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes %v of %s's outlived ralph", left, agent)
	}
}

// Ctrl-C to ralph while gemini waits for the model leaves no process of
// gemini's behind.
func TestRunRealGeminiSIGINT(t *testing.T) {
	t.Parallel()
	gemini := realAgent(t, "gemini")
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "thinking", Stall: true}
	})
	t.Cleanup(srv.Close)
	dir := taskRepo(t, "write hello.txt")
	env := gemini.env(t, srv)
	cmd, out := startRun(t, dir, env, "--agent", "gemini", "--task-timeout", "6m")
	// Node loads gemini's bundle in seconds alone, but has taken over 30 in
	// the whole suite on two busy cores (20 beside six busy loops).
	waitFor(t, "gemini to call the model", 3*time.Minute, func() bool { return len(srv.Requests()) > 0 })
	pids := runProcesses(env, cmd.Process.Pid)
	if len(pids) == 0 {
		t.Fatal("no process of gemini's is found by its environment")
	}
	t.Logf("gemini's processes: %v", pids)
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, out, 20*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, out.String())
	}
	assertRunLeftNothing(t, env, "gemini")
}

// Ctrl-C to ralph while opencode runs a command leaves no process of
// opencode's behind: opencode, its helpers and the command, which ralph
// does not start itself.
func TestRunRealOpenCodeSIGINTLeavesNothing(t *testing.T) {
	t.Parallel()
	opencode := realAgent(t, "opencode")
	dir := taskRepo(t, "sleep")
	pidFile := filepath.Join(dir, "sleeper.pid")
	call := llmtest.ToolCall{Name: "bash", Arguments: fmt.Sprintf(`{"command":"echo $$ > %s; exec sleep 300","description":"sleep"}`, pidFile)}
	env := opencode.env(t, opencode.model(t, call))
	cmd, out := startRun(t, dir, env, "-y", "--sandbox", "danger-full-access", "--agent", "opencode", "--task-timeout", "6m")
	// A real opencode takes a while to start, the longer on a busy
	// machine: 40 seconds beside six busy loops, over a minute in the
	// whole suite on two cores.
	pids := recordedPIDs(t, "opencode's command", 3*time.Minute, pidFile)
	// The command is found by its pid; ralph and opencode by their
	// environment.
	if n := len(runProcesses(env, 0)); n < 2 {
		t.Fatalf("%d processes of the run, want ralph and opencode at least", n)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, out, 30*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, out.String())
	}
	assertNothingLeft(t, pids)
	assertRunLeftNothing(t, env, "opencode")
}
