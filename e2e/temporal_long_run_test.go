package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A long run on Temporal continues as new before its history fills
// (ralph-temporal/engine/continue.go). Thousands of tasks are too many
// for a test, so RALPH_TEMPORAL_CONTINUE_AFTER_EVENTS, which only tests
// set, makes a run of a few tasks continue every few tasks; ralph, which
// follows the workflow, still sees one run: one session, every task's
// events, and a status that counts every task done.

// continuedRuns counts the runs of the dev server's workflows that
// continued as new, as Temporal's visibility lists them (it may lag).
func continuedRuns(t *testing.T, addr string) int {
	t.Helper()
	out, err := exec.Command(temporalCLI(t), "workflow", "list", "--address", addr, "--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow list: %v", err)
	}
	return strings.Count(strings.ToUpper(string(out)), "CONTINUED_AS_NEW")
}

func TestTemporalLongRunContinuesAsNewAndEndsAsOne(t *testing.T) {
	t.Parallel()
	addr := startDevServer(t)
	var titles []string
	for i := 1; i <= 8; i++ {
		titles = append(titles, fmt.Sprintf("write f%d.txt %d", i, i))
	}
	project, remoteDir := temporalProject(t, titles...)
	srv := fileTaskModel(t, nil)
	// About 12 history events a task: a run continues every three tasks
	// or so.
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_TEMPORAL_CONTINUE_AFTER_EVENTS=40"), personGit...)
	w := startWorker(t, addr, env)
	r := ralph(t, project, env, nil, "--output-format", "stream-json", "run", "--engine", "temporal", "--address", addr)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s\nworker:\n%s", r.code, r.stdout, r.stderr, w.out.String())
	}
	n := 0
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if n = continuedRuns(t, addr); n >= 2 || time.Now().After(end) {
			break
		}
	}
	if n < 2 {
		t.Fatalf("the run continued as new %d times, want at least 2", n)
	}
	t.Logf("the run continued as new %d times in %s", n, r.dur.Round(time.Millisecond))
	var want, picked []string
	for i := 1; i <= 8; i++ {
		id := fmt.Sprintf("t%d", i)
		want = append(want, id+" done")
		picked = append(picked, "task_picked "+id)
		// Every task's events reached ralph once, from whichever run.
		if c := strings.Count(r.stdout, `"text":"`+id+` in_progress"`); c != 1 {
			t.Errorf("%s began %d times in ralph's events", id, c)
		}
	}
	if got := taskStates(t, onRemote(t, remoteDir)); !slices.Equal(got, want) {
		t.Errorf("tasks on the remote %q, want %q", got, want)
	}
	// One session (sessionDir fails on more), whose decisions hold
	// every run's.
	if got := loopDecisions(t, project); !slices.Equal(got, picked) {
		t.Errorf("decisions %q, want %q", got, picked)
	}
	st := readFileT(t, filepath.Join(sessionDir(t, project), "session.json"))
	if !strings.Contains(st, `"status": "completed"`) {
		t.Errorf("the session after the run:\n%s", st)
	}
	// The workflow's status follows its latest run, which knows every
	// task the runs before it did.
	q, err := exec.Command(buildRalphTemporal(t), "query", "--address", addr, "-C", project, "status").Output()
	if err != nil {
		t.Fatalf("ralph-temporal query status: %v", err)
	}
	var status struct {
		SessionID string   `json:"session_id"`
		Done      []string `json:"done"`
	}
	if err := json.Unmarshal(q, &status); err != nil || len(status.Done) != 8 || filepath.Base(sessionDir(t, project)) != status.SessionID {
		t.Errorf("status %+v (%v) of session %s:\n%s", status, err, filepath.Base(sessionDir(t, project)), q)
	}
	// ralph status counts the iterations of every run in the session.
	if s := ralph(t, project, env, nil, "status"); s.code != 0 || !strings.Contains(s.stdout, "iteration 8,") {
		t.Errorf("ralph status exit %d:\n%s\n%s", s.code, s.stdout, s.stderr)
	}
}
