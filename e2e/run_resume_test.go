package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunResumedInChatKeepsItsConfiguration: a `ralph run --verify false`
// stopped into chat with Ctrl-C and resumed there with /run goes on with
// its own run configuration. /run used to build the loop's options anew
// and left out --verify (and --until, --breaker, the limits, the
// external agent), so the tasks were checked off without the check that
// always fails.
func TestRunResumedInChatKeepsItsConfiguration(t *testing.T) {
	t.Parallel()
	r, dir, srv, fast := runIntoChat(t, "--verify", "false", "--on-error", "skip")
	waitFor(t, "no child streaming after the switch", 2*time.Second, func() bool { return srv.Active() == 0 })
	fast.Store(true)
	r.typeKeys("/run\r")
	r.waitFor("task loop:", 30*time.Second)
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(string(data), "- [x]") {
		t.Fatalf("/run checked a task off although --verify false fails:\n%s", data)
	}
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
}

// A resumed task loop's result counts this run, as a continued
// one-shot's does: num_turns the iterations it made, the session's
// totals under their own names (num_turns counted the whole session,
// duration_ms this run).
func TestResumedLoopResultCountsThisRun(t *testing.T) {
	t.Parallel()
	complete := testdata("agents", "complete.sh")
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two")
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--json", "run", "--max-iterations", "1", "--agent", "exec:"+complete); r.code != 1 {
		t.Fatalf("run: exit %d, want 1 (stopped by --max-iterations)\n%s", r.code, r.stderr)
	}
	r := ralph(t, dir, env, nil, "--json", "resume", "--max-iterations", "5")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	if m := resultLine(t, r.stdout); m["num_turns"] != 1.0 || m["session_num_turns"] != 2.0 {
		t.Fatalf("the resumed loop's result = %v, want num_turns 1 and session_num_turns 2", m)
	}
}
