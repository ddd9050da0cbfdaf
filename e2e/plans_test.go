package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// planList is `ralph plans --json`, by plan.
func planList(t *testing.T, dir string, env []string) map[string]struct {
	Status, Session string
	Tasks           struct{ Done, Total int }
} {
	t.Helper()
	r := ralph(t, dir, env, nil, "plans", "--json")
	var list []struct {
		Plan, Status, Session string
		Tasks                 struct{ Done, Total int }
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
		t.Fatalf("plans --json: exit %d %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	out := map[string]struct {
		Status, Session string
		Tasks           struct{ Done, Total int }
	}{}
	for _, p := range list {
		out[p.Plan] = struct {
			Status, Session string
			Tasks           struct{ Done, Total int }
		}{p.Status, p.Session, p.Tasks}
	}
	return out
}

// TestRunTwoPlansEachInItsOwnSession: run plan A, stop it, run plan B to
// the end, run A again: A goes on in its own session where it stood, each
// task is done once, and ralph plans says where each plan stands
// throughout.
func TestRunTwoPlansEachInItsOwnSession(t *testing.T) {
	t.Parallel()
	var slow atomic.Bool
	slow.Store(true)
	child := taskChildModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		for _, m := range r.Request.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "): a two") && slow.Load() {
				return llmtest.Response{Text: strings.Repeat("thinking ", 300), ChunkSize: 9, ChunkDelayMS: 40}
			}
		}
		return child(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "docs", "plans", "a.md"), "# Plan A\n\n- [ ] a one\n- [ ] a two\n")
	mustWrite(t, filepath.Join(dir, "docs", "plans", "b.md"), "# Plan B\n\n- [ ] b one\n- [ ] b two\n")
	env := cleanEnv(t)

	cmd, _, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run", "docs/plans/a.md")
	waitFor(t, "a two in progress", 20*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "docs", "plans", "a.md"))
		return strings.Contains(string(data), "- [x] a one") && strings.Contains(string(data), "- [~] a two") && srv.Active() == 1
	})
	_ = cmd.Process.Signal(syscall.SIGINT)
	if code, _ := exitCode(t, cmd, 10*time.Second); code != 130 {
		t.Fatalf("stopping A: exit %d\n%s", code, errb.String())
	}
	plans := planList(t, dir, env)
	a := plans["docs/plans/a.md"]
	if a.Status != "interrupted" || a.Tasks.Done != 1 || plans["docs/plans/b.md"].Status != "not started" {
		t.Fatalf("after stopping A: %+v", plans)
	}

	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "docs/plans/b.md"); r.code != 0 {
		t.Fatalf("B: exit %d\n%s", r.code, r.stderr)
	}
	plans = planList(t, dir, env)
	b := plans["docs/plans/b.md"]
	if b.Status != "completed" || b.Tasks.Done != 2 || b.Session == a.Session || plans["docs/plans/a.md"] != a {
		t.Fatalf("after B: %+v (A was %+v)", plans, a)
	}

	slow.Store(false)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "docs/plans/a.md")
	if r.code != 0 || !strings.Contains(r.stderr, "docs/plans/a.md goes on in its session "+a.Session) {
		t.Fatalf("A again: exit %d\n%s", r.code, r.stderr)
	}
	plans = planList(t, dir, env)
	if got := plans["docs/plans/a.md"]; got.Session != a.Session || got.Status != "completed" || got.Tasks.Done != 2 {
		t.Fatalf("after A again: %+v", plans)
	}
	if done := readFileT(t, filepath.Join(dir, "done.log")); done != "a one\nb one\nb two\na two\n" {
		t.Fatalf("done.log:\n%s", done)
	}
	if tasks, err := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md")); err == nil {
		t.Fatalf("a plan's run wrote RALPH_TASKS.md:\n%s", tasks)
	}
}

// TestRunRalphexPlan: a plan in ralphex's shape runs to the end: each
// "### Task N" section is one task, taken in order, its steps checked when
// it is done, and the plan's validation commands are its verify.
func TestRunRalphexPlan(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	plan := "# Plan: caching\n\n## Overview\n\nCache reads.\n\n## Implementation Steps\n\n" +
		"### Task 1: add the interface\n\n- [ ] write it\n- [ ] test it\n\n" +
		"### Task 2: wire it in\n\n- [ ] call it\n\n" +
		"## Validation Commands\n\n- `echo verified >> verify.log` - count the checks\n- `test -f done.log`\n"
	mustWrite(t, filepath.Join(dir, "docs", "plans", "cache.md"), plan)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "docs/plans/cache.md")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if done := readFileT(t, filepath.Join(dir, "done.log")); done != "add the interface\nwire it in\n" {
		t.Fatalf("done.log:\n%s", done)
	}
	if v := readFileT(t, filepath.Join(dir, "verify.log")); v != "verified\nverified\n" {
		t.Fatalf("the validation commands ran %q, want once per task", v)
	}
	want := strings.NewReplacer("- [ ]", "- [x]").Replace(plan)
	if got := readFileT(t, filepath.Join(dir, "docs", "plans", "cache.md")); got != want {
		t.Fatalf("the plan after the run:\n%s", got)
	}
}

const prdPlan = `{
  "name": "Cache",
  "branchName": "ralph/cache",
  "userStories": [
    {
      "id": "US-001",
      "title": "schema",
      "priority": 2,
      "passes": false
    },
    {
      "id": "US-002",
      "title": "reads",
      "priority": 1,
      "dependsOn": ["US-001"],
      "passes": false
    },
    {
      "id": "US-003",
      "title": "writes",
      "priority": 1,
      "passes": false
    }
  ]
}
`

// TestRunPRDInPlace: ralph-tui's prd.json is worked where it lies: stories
// in priority and dependency order, each marked passes: true as ralph-tui
// marks it, every other byte kept; a cycle is refused with exit 2.
func TestRunPRDInPlace(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "prd.json"), prdPlan)
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "prd.json"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if done := readFileT(t, filepath.Join(dir, "done.log")); done != "writes\nschema\nreads\n" {
		t.Fatalf("done.log:\n%s", done)
	}
	if got := readFileT(t, filepath.Join(dir, "prd.json")); got != strings.ReplaceAll(prdPlan, `"passes": false`, `"passes": true`) {
		t.Fatalf("prd.json after the run:\n%s", got)
	}

	cycle := strings.Replace(strings.Replace(prdPlan, `"passes": true`, `"passes": false`, -1), `"title": "schema",`, `"title": "schema", "dependsOn": ["US-002"],`, 1)
	mustWrite(t, filepath.Join(dir, "cycle.json"), cycle)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "cycle.json")
	if r.code != 2 || !strings.Contains(r.stderr, "Tasks US-001, US-002 depend on each other in a cycle") {
		t.Fatalf("a cycle: exit %d\n%s", r.code, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "cycle.json")); got != cycle {
		t.Fatal("the refused plan changed")
	}
}

// TestRunArchivesAFinishedPlan: --archive-done moves a finished plan to
// plans_dir/completed, as ralphex does.
func TestRunArchivesAFinishedPlan(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "docs", "plans", "small.md"), "- [ ] only task\n")
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run", "--archive-done", "docs/plans/small.md")
	if r.code != 0 || !strings.Contains(r.stderr, "moved it to docs/plans/completed/small.md") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "docs", "plans", "completed", "small.md")); !strings.HasPrefix(got, "- [x] only task") {
		t.Fatalf("archived plan:\n%s", got)
	}
}

// TestPlanNamesThatAreBadInput: a plan that does not exist, or lies
// outside the project, is one sentence and exit 2 for every command that
// takes one.
func TestPlanNamesThatAreBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_API_KEY=sk-test")
	for _, args := range [][]string{{"run", "nope.md"}, {"status", "nope.md"}, {"plans", "--graph", "nope.md"}, {"run", "../outside.md"}} {
		r := ralph(t, dir, env, nil, args...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "plan") {
			t.Errorf("ralph %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "sessions")); err == nil {
		t.Error("a refused plan left a session behind")
	}
}
