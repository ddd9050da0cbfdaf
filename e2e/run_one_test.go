package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestRunResumedInChatEndsAsItsRun: `ralph run --review end
// --archive-done PLAN` stopped into chat with Ctrl-C and resumed there
// with /run ends as the run it was started as: once its last task is
// done the reviewers read the run's whole work and the finished plan is
// moved to plans_dir/completed. Only ralph run used to do those steps,
// so a loop finished by /run skipped both without a word.
func TestRunResumedInChatEndsAsItsRun(t *testing.T) {
	t.Parallel()
	var fast atomic.Bool
	worker, reviewer := taskChildModel(), reviewModel()
	srv := llmtest.NewServerFunc(func(req llmtest.RecordedRequest) llmtest.Response {
		for _, m := range req.Request.Messages {
			if m.Role == "user" && taskPromptRe.MatchString(m.Content) {
				if !fast.Load() {
					return llmtest.Response{Text: strings.Repeat("thinking ", 200), ChunkSize: 9, ChunkDelayMS: 40}
				}
				return worker(req)
			}
		}
		return reviewer(req)
	})
	t.Cleanup(srv.Close)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "README.md"), "calc\n")
	shIn(t, dir, "git init -q -b main && git add . && git commit -qm start")
	plan := filepath.Join("docs", "plans", "small.md")
	mustWrite(t, filepath.Join(dir, plan), "- [ ] first thing\n- [ ] second thing\n")

	r := startPTY(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "run", "--review=end", "--archive-done", plan)
	r.waitFor("first thing", 10*time.Second)
	waitFor(t, "a child streaming", 10*time.Second, func() bool { return srv.Active() == 1 })
	r.typeKeys("\x03")
	r.waitFor("this is chat now", 5*time.Second)
	r.waitIdle(5*time.Second, nil)
	waitFor(t, "no child streaming after the switch", 2*time.Second, func() bool { return srv.Active() == 0 })
	fast.Store(true)
	// The Ctrl-C was a signal, and a signal's stop holds every git
	// started after it to two seconds (memory/git's stopGrace) as the
	// process is on its way out. This one handed the loop to the chat
	// instead, and the resumed loop's checkpoints ran past those two
	// seconds on a busy machine and were ended; resuming after them
	// makes that certain.
	time.Sleep(2500 * time.Millisecond)
	r.typeKeys("/run\r")
	r.waitFor("task loop: all tasks done", 30*time.Second)
	if screen := r.screen(); strings.Contains(screen, "checkpoint") {
		t.Fatalf("the resumed loop could not record its checkpoints:\n%s", screen)
	}
	r.waitFor("the review after the run is clean", 30*time.Second)
	r.waitFor("moved it to docs/plans/completed/small.md", 10*time.Second)
	if got := readFileT(t, filepath.Join(dir, "docs", "plans", "completed", "small.md")); strings.Count(got, "- [x]") != 2 {
		t.Fatalf("the archived plan:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, plan)); !os.IsNotExist(err) {
		t.Fatalf("the finished plan is still among the plans in progress: %v", err)
	}
	if decisions := readFileT(t, filepath.Join(sessionDir(t, dir), "decisions.jsonl")); !strings.Contains(decisions, `"kind":"review_done"`) {
		t.Fatalf("no review of the run was recorded:\n%s", decisions)
	}
	r.waitIdle(5*time.Second, nil)
	r.typeKeys("\x04")
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestTemporalRefusesWhatItCannotRun: what the loop on Temporal cannot
// do (a plan other than RALPH_TASKS.md, reviews, from the flags or the
// config) is refused in one sentence with exit 2 before anything starts,
// rather than dropped on the way to the workers.
func TestTemporalRefusesWhatItCannotRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "only thing")
	mustWrite(t, filepath.Join(dir, "docs", "plans", "p.md"), "- [ ] planned thing\n")
	env := cleanEnv(t, "OPENAI_API_KEY=sk-test")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--engine", "temporal", "--address", "127.0.0.1:1", "--review=end"}, "--engine temporal has no reviewers for --review"},
		{[]string{"run", "--engine", "temporal", "--address", "127.0.0.1:1", "docs/plans/p.md"}, "run the plan docs/plans/p.md with the local engine"},
		{[]string{"run", "--engine", "temporal", "--address", "127.0.0.1:1", "--prompt-template", "missing.tmpl"}, "missing.tmpl does not exist"},
	} {
		r := ralph(t, dir, env, nil, c.args...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("ralph %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	// The config's review is the run's, as it is for the local engine.
	mustWrite(t, filepath.Join(dir, ".ralph", "config.toml"), "review = \"task\"\n")
	r := ralph(t, dir, env, nil, "run", "--engine", "temporal", "--address", "127.0.0.1:1")
	if r.code != 2 || !strings.Contains(r.stderr, "cannot run --review task") {
		t.Errorf("review in the config: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestTemporalGetsTheRunAsData: ralph run --engine temporal hands
// ralph-temporal the run's configuration as JSON on its standard input,
// with the prompt template's text, rather than as flags it would parse
// again (which dropped --prompt-template, --commit, --worktrees and
// --archive-done). A stand-in ralph-temporal beside a copy of ralph (where
// ralph looks first, so the real one the Temporal tests build beside the
// tests' ralph cannot answer instead) records what it got.
func TestTemporalGetsTheRunAsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "only thing")
	mustWrite(t, filepath.Join(dir, "t.tmpl"), "Work on {{.Task.Title}} our way.\n")
	fake := t.TempDir()
	got := filepath.Join(fake, "got")
	mustWrite(t, filepath.Join(fake, "ralph-temporal"), "#!/bin/sh\necho \"$@\" > "+got+".args\ncat > "+got+".json\n"+
		`echo '{"result":{"reason":"all_done","done":["t1"],"failed":[],"iterations":1,"tasks":{"total":1,"done":1},"usage":{},"session_id":"s"}}'`+"\n")
	if err := os.Chmod(filepath.Join(fake, "ralph-temporal"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(fake, "ralph")
	if err := os.WriteFile(bin, []byte(readFileT(t, ralphBin)), 0o755); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t, "OPENAI_API_KEY=sk-test")
	r := ralphAt(t, bin, dir, env, nil, "run", "--engine", "temporal", "--address", "127.0.0.1:1", "--prompt-template", "t.tmpl",
		"--commit", "--archive-done", "--verify", "make check", "--agent", "claude", "--max-wait", "90s")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if args := readFileT(t, got+".args"); !strings.Contains(args, "run -C "+dir+" --config -") || strings.Contains(args, "--verify") {
		t.Fatalf("ralph-temporal's arguments: %s", args)
	}
	var start struct {
		Run     map[string]any `json:"run"`
		Prompt  string         `json:"prompt"`
		MaxWait int64          `json:"max_wait"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, got+".json")), &start); err != nil {
		t.Fatal(err)
	}
	if start.Prompt != "Work on {{.Task.Title}} our way.\n" || start.MaxWait != int64(90*time.Second) {
		t.Fatalf("the prompt and max_wait sent: %+v", start)
	}
	for k, want := range map[string]any{"commit": true, "archive_done": true, "verify": "make check", "agent": "claude",
		"prompt_template": filepath.Join(dir, "t.tmpl")} {
		if start.Run[k] != want {
			t.Errorf("run.%s = %v, want %v (all: %v)", k, start.Run[k], want, start.Run)
		}
	}
}
