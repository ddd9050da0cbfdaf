package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// The task loop is one machine with two hosts (coordinator/loop/machine):
// the same plan run locally (ralph run) and on a Temporal dev server
// (ralph run --engine temporal) makes the same decisions and ends with
// the same task states. The plan holds a pass, a failure that trips the
// breaker (no_progress >= 1, nobody to ask: it opens, goes half-open,
// and the next task's success closes it), and ends with nothing left;
// and a question nobody answers (the breaker where someone may answer).

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
	for _, task := range planfile.ParseTasks([]byte(readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")))).Tasks() {
		out = append(out, task.ID+" "+string(task.State))
	}
	return out
}

// loopReasons are the reasons of the machine's decisions of the
// project's only session, by "kind task" (the first of each).
func loopReasons(t *testing.T, project string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(readFileT(t, filepath.Join(sessionDir(t, project), "decisions.jsonl"))), "\n") {
		var d memory.DecisionRecord
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if k := strings.TrimSpace(d.Kind + " " + d.Task); slices.Contains(machineKinds, d.Kind) && out[k] == "" {
			out[k] = d.Reason
		}
	}
	return out
}

// sameOnBothHosts runs titles with args locally and on a dev server,
// the run ending with exit code, and checks both made the decisions
// want and ended with the task states states; it returns the local
// project and the one the Temporal run was started from.
// before, when set, is called before each run.
func sameOnBothHosts(t *testing.T, env []string, before func(), titles, args []string, code int, want, states []string) (string, string) {
	t.Helper()
	if before == nil {
		before = func() {}
	}
	local, _ := temporalProject(t, titles...)
	before()
	if r := ralph(t, local, env, nil, args...); r.code != code {
		t.Fatalf("local: exit %d, want %d\n%s\n%s", r.code, code, r.stdout, r.stderr)
	}
	addr := startDevServer(t)
	project, remoteDir := temporalProject(t, titles...)
	w := startWorker(t, addr, env)
	before()
	if r := ralph(t, project, env, nil, append(args, "--engine", "temporal", "--address", addr)...); r.code != code {
		t.Fatalf("temporal: exit %d, want %d\n%s\n%s\nworker:\n%s", r.code, code, r.stdout, r.stderr, w.out.String())
	}
	if got := loopDecisions(t, local); !slices.Equal(got, want) {
		t.Errorf("local decisions\n%q\nwant\n%q", got, want)
	}
	if got := loopDecisions(t, project); !slices.Equal(got, want) {
		t.Errorf("temporal decisions\n%q\nwant\n%q", got, want)
	}
	if got := taskStates(t, local); !slices.Equal(got, states) {
		t.Errorf("local tasks %q, want %q", got, states)
	}
	if got := taskStates(t, onRemote(t, remoteDir)); !slices.Equal(got, states) {
		t.Errorf("temporal tasks %q, want %q", got, states)
	}
	return local, project
}

// TestTemporalAndLocalRunsFailAVerificationAlike: the run's --verify
// refutes the first task's claim; both hosts word the failure alike
// (machine.Settle), the head of what the command printed and which
// command it was, and go on to the task it passes.
func TestTemporalAndLocalRunsFailAVerificationAlike(t *testing.T) {
	t.Parallel()
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	check := "test -f b.txt || (echo no b.txt yet; exit 1)"
	local, project := sameOnBothHosts(t, env, nil, []string{"write a.txt one", "write b.txt two"},
		[]string{"--output-format", "stream-json", "run", "--retries", "0", "--verify", check}, 1,
		[]string{"task_picked t1", "task_skip t1", "task_picked t2"},
		[]string{"t1 failed", "t2 done"})
	mine, theirs := loopReasons(t, local)["task_skip t1"], loopReasons(t, project)["task_skip t1"]
	if mine != theirs {
		t.Errorf("task_skip t1 because\n%q locally and\n%q on Temporal", mine, theirs)
	}
	if !strings.HasPrefix(mine, "verification failed: no b.txt yet") || !strings.HasSuffix(mine, "(`"+check+"` did not pass); 1 attempt failed and --retries 0 allows no more") {
		t.Errorf("task_skip t1 because %q, want the command's output and the command", mine)
	}
}

func TestTemporalAndLocalRunsDecideAlike(t *testing.T) {
	t.Parallel()
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	sameOnBothHosts(t, env, nil, []string{"write a.txt one", "broken b.txt two", "write c.txt three"},
		[]string{"--output-format", "stream-json", "run", "--retries", "0", "--breaker", "no_progress >= 1", "--breaker-cooldown", "1s"}, 1,
		[]string{"task_picked t1", "task_picked t2", "task_skip t2", "breaker_open", "breaker_half_open", "task_picked t3", "breaker_closed"},
		[]string{"t1 done", "t2 failed", "t3 done"})
}

// TestTemporalAndLocalRunsWaitOutALimitAlike: the model's first answer
// on each host is a 429 resetting in two seconds, longer than a call
// waits (max_retry_after 1s): the attempt spends no retry, both hosts
// wait for the reset and go on.
func TestTemporalAndLocalRunsWaitOutALimitAlike(t *testing.T) {
	t.Parallel()
	// Each run's first request is the limited one.
	var limitNext atomic.Bool
	answers := fileTaskAnswers(nil)
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		if limitNext.CompareAndSwap(true, false) {
			return llmtest.Response{RateLimit: &llmtest.RateLimit{Shape: "openai", ResetS: 2}}
		}
		return answers(r)
	})
	t.Cleanup(srv.Close)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), "max_retry_after = \"1s\"\n")
	sameOnBothHosts(t, env, func() { limitNext.Store(true) }, []string{"write a.txt one", "write b.txt two"},
		[]string{"--output-format", "stream-json", "run", "--max-wait", "1m"}, 0,
		[]string{"task_picked t1", "limit_wait t1", "limit_wait_over", "task_picked t1", "task_picked t2"},
		[]string{"t1 done", "t2 done"})
}

// TestTemporalAndLocalRunsLeaveAQuestionUnansweredAlike: the breaker
// trips where a person said they would answer (--wait-for-answers, no
// terminal), so both hosts ask whether to go on; nobody answers within
// the answer timeout, the default is no, and both stop there with the
// last task left open.
func TestTemporalAndLocalRunsLeaveAQuestionUnansweredAlike(t *testing.T) {
	t.Parallel()
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	sameOnBothHosts(t, env, nil, []string{"write a.txt one", "broken b.txt two", "write c.txt three"},
		[]string{"--output-format", "stream-json", "run", "--retries", "0", "--breaker", "no_progress >= 1",
			"--wait-for-answers", "--answer-timeout", "2s"}, 1,
		[]string{"task_picked t1", "task_picked t2", "task_skip t2", "breaker t2", "breaker_stop"},
		[]string{"t1 done", "t2 failed", "t3 open"})
}
