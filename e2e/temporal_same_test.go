package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
)

// The task loop is one machine with two hosts (coordinator/loop/machine):
// the same plan run locally (ralph run) and on a Temporal dev server
// (ralph run --engine temporal) makes the same decisions and ends with
// the same task states. The plan holds a pass, a failure that trips the
// breaker (no_progress >= 1, nobody to ask: it opens, goes half-open,
// and the next task's success closes it), and ends with nothing left.

// machineKinds are the decision kinds the machine records; a host's own
// (git, a task's id) are left out of the comparison.
var machineKinds = []string{"task_picked", "task_retry", "task_skip", "task_abort", "breaker", "breaker_open", "breaker_half_open",
	"breaker_closed", "breaker_go_on", "breaker_stop", "limit_wait", "limit_wait_over", "budget_raised", "budget_stop", "config_error"}

// loopDecisions are the machine's decisions of the project's only
// session, as "kind task".
func loopDecisions(t *testing.T, project string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(readFileT(t, filepath.Join(sessionDir(t, project), "decisions.jsonl"))), "\n") {
		var d memory.DecisionRecord
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if slices.Contains(machineKinds, d.Kind) {
			out = append(out, strings.TrimSpace(d.Kind+" "+d.Task))
		}
	}
	return out
}

// taskStates are the task file's tasks as "id state".
func taskStates(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, task := range memory.ParseTasks([]byte(readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")))).Tasks() {
		out = append(out, task.ID+" "+string(task.State))
	}
	return out
}

func TestTemporalAndLocalRunsDecideAlike(t *testing.T) {
	t.Parallel()
	titles := []string{"write a.txt one", "broken b.txt two", "write c.txt three"}
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	args := []string{"--output-format", "stream-json", "run", "--retries", "0", "--breaker", "no_progress >= 1", "--breaker-cooldown", "1s"}

	local, _ := temporalProject(t, titles...)
	if r := ralph(t, local, env, nil, args...); r.code != 1 {
		t.Fatalf("local: exit %d (want 1, a task failed)\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	addr := startDevServer(t)
	project, remoteDir := temporalProject(t, titles...)
	w := startWorker(t, addr, env)
	if r := ralph(t, project, env, nil, append(args, "--engine", "temporal", "--address", addr)...); r.code != 1 {
		t.Fatalf("temporal: exit %d (want 1, a task failed)\n%s\n%s\nworker:\n%s", r.code, r.stdout, r.stderr, w.out.String())
	}

	want := []string{"task_picked t1", "task_picked t2", "task_skip t2", "breaker_open", "breaker_half_open", "task_picked t3", "breaker_closed"}
	if got := loopDecisions(t, local); !slices.Equal(got, want) {
		t.Errorf("local decisions\n%q\nwant\n%q", got, want)
	}
	if got := loopDecisions(t, project); !slices.Equal(got, want) {
		t.Errorf("temporal decisions\n%q\nwant\n%q", got, want)
	}
	states := []string{"t1 done", "t2 failed", "t3 done"}
	if got := taskStates(t, local); !slices.Equal(got, states) {
		t.Errorf("local tasks %q, want %q", got, states)
	}
	if got := taskStates(t, onRemote(t, remoteDir)); !slices.Equal(got, states) {
		t.Errorf("temporal tasks %q, want %q", got, states)
	}
}
