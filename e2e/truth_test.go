package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 43: results tell the truth. A check that could not run is a
// failure, a hint does what it says, and a loop with nothing left to do
// ends at once.

// reviewJSON is the part of ralph review --json these tests read.
type reviewJSON struct {
	Type     string `json:"type"`
	Clean    bool   `json:"clean"`
	Error    string `json:"error"`
	Findings []struct{ Reviewer, Why string }
}

func parseReview(t *testing.T, r runResult) reviewJSON {
	t.Helper()
	var rep reviewJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Type != "review" {
		t.Fatalf("ralph review --json printed no report (%v); exit %d\nstdout:\n%s\nstderr:\n%s", err, r.code, r.stdout, r.stderr)
	}
	return rep
}

// sessionStatus is the status the project's only session was left in.
func sessionStatus(t *testing.T, dir string) string {
	t.Helper()
	var st struct{ Status string }
	data := readFileT(t, filepath.Join(sessionDir(t, dir), "session.json"))
	if err := json.Unmarshal([]byte(data), &st); err != nil {
		t.Fatalf("session.json: %v\n%s", err, data)
	}
	return st.Status
}

// TestReviewUnreachableModelFails: with the model endpoint unreachable no
// reviewer can run, so the review fails, named, with exit 1 and
// "clean": false, instead of "No findings." and exit 0; and its session
// is ended, not left running.
func TestReviewUnreachableModelFails(t *testing.T) {
	t.Parallel()
	dir := reviewProject(t)
	env := cleanEnv(t, "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "OPENAI_API_KEY=sk-test")
	r := ralph(t, dir, env, nil, "--json", "review", "--findings-only")
	rep := parseReview(t, r)
	// An unreachable endpoint is a configuration error: exit 2, as for a
	// one-shot, and never a clean review.
	if r.code != 2 || rep.Clean || !strings.Contains(rep.Error, "reviewer") || !strings.Contains(r.stderr, "the review could not be done") ||
		!strings.Contains(r.stdout, `"findings":[]`) {
		t.Fatalf("exit %d, report %+v\nstderr:\n%s", r.code, rep, r.stderr)
	}
	text := ralph(t, dir, env, nil, "review", "--findings-only")
	if text.code != 2 || strings.Contains(text.stdout, "No findings.") || !strings.Contains(text.stdout, "could not be done") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", text.code, text.stdout, text.stderr)
	}
}

// silentReviewers is a stand-in model whose reviewers answer in words
// and never call report_findings; a task's worker (ralph run) writes
// calc.go and completes its task.
func silentReviewers() *llmtest.Server {
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	return llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		for _, m := range msgs {
			if m.Role != openai.ChatMessageRoleUser {
				continue
			}
			if sub := taskPromptRe.FindStringSubmatch(m.Content); sub != nil {
				switch {
				case last.Role == openai.ChatMessageRoleUser:
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: args(map[string]string{"path": "calc.go", "content": calcBug})}}}
				case last.Name == "write_file":
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": sub[1], "summary": "added Mul"})}}}
				}
				return llmtest.Response{Text: "done"}
			}
			break
		}
		return llmtest.Response{Text: "The change looks fine to me."}
	})
}

// TestReviewersThatNeverReportFail: reviewers that answer but never call
// report_findings found nothing only as far as anyone knows: the review
// fails with exit 1, "clean": false and the reviewers named, and its
// session ends failed, so the next ralph does not call it left running.
func TestReviewersThatNeverReportFail(t *testing.T) {
	t.Parallel()
	srv := silentReviewers()
	t.Cleanup(srv.Close)
	dir := reviewProject(t)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "review", "--findings-only")
	rep := parseReview(t, r)
	if r.code != 1 || rep.Clean || !strings.Contains(rep.Error, "the correctness reviewer finished without calling report_findings") {
		t.Fatalf("exit %d, report %+v\nstderr:\n%s", r.code, rep, r.stderr)
	}
	if st := sessionStatus(t, dir); st != "failed" {
		t.Fatalf("the review's session is %q, not failed", st)
	}
	next := ralph(t, dir, env, nil, "--base-url", srv.URL, "status")
	if strings.Contains(next.stdout+next.stderr, "left running") {
		t.Fatalf("the next ralph took the review for a session left running:\n%s\n%s", next.stdout, next.stderr)
	}
}

// TestReviewSessionCompleted: a review that ran and found nothing ends
// its session completed.
func TestReviewSessionCompleted(t *testing.T) {
	t.Parallel()
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if last := msgs[len(msgs)-1]; last.Role == openai.ChatMessageRoleTool {
			return llmtest.Response{Text: "done"}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "report_findings", Arguments: args(map[string]any{"findings": []any{}})}}}
	})
	t.Cleanup(srv.Close)
	dir := reviewProject(t)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "review", "--findings-only")
	if r.code != 0 || !strings.Contains(r.stdout, "No findings.") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if st := sessionStatus(t, dir); st != "completed" {
		t.Fatalf("the review's session is %q, not completed", st)
	}
}

// TestRunBareReviewFailsUnreportedTask: bare --review means --review task,
// and a task whose reviewers never reported is not counted as reviewed:
// its attempts fail and the run exits 1.
func TestRunBareReviewFailsUnreportedTask(t *testing.T) {
	t.Parallel()
	srv := silentReviewers()
	t.Cleanup(srv.Close)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "calc.go"), calcGood)
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), "- [ ] add Mul <!-- ralph:id=mul -->\n")
	shIn(t, dir, "git init -q -b main && git add . && git commit -qm calc")
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run", "--review", "--retries", "0")
	if r.code != 1 || strings.Contains(r.stderr, "flag needs an argument") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.HasPrefix(tasks, "- [!] add Mul") {
		t.Fatalf("the unreviewed task counts:\n%s", tasks)
	}
	errs := readFileT(t, filepath.Join(sessionDir(t, dir), "errors.jsonl"))
	if !strings.Contains(errs, "finished without calling report_findings") {
		t.Fatalf("the attempt's failure does not name the reviewers:\n%s", errs)
	}
}

// TestLoopEndsAtOnceWhenNothingIsLeft: one task that fails every attempt,
// with nobody at a terminal and the breaker's default cooldown of five
// minutes: the task is failed, nothing is left to start, and the loop
// exits 1 within seconds instead of waiting out the cooldown.
func TestLoopEndsAtOnceWhenNothingIsLeft(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "I could not do it."}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), "- [ ] an impossible task <!-- ralph:id=t1 -->\n")
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run")
	// "At once" is against the breaker's cooldown of minutes: three
	// iterations take a second on a quiet machine and once took ten in
	// the whole suite on two busy cores.
	if r.code != 1 || r.dur > 40*time.Second {
		t.Fatalf("exit %d after %s\n%s\n%s", r.code, r.dur, r.stdout, r.stderr)
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.HasPrefix(tasks, "- [!] an impossible task") {
		t.Fatalf("tasks:\n%s", tasks)
	}
	if decisions, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "decisions.jsonl")); strings.Contains(string(decisions), `"kind":"breaker_open"`) {
		t.Fatalf("the breaker opened with nothing left to hold back:\n%s", decisions)
	}
}

// TestPlanTaskVerifyDecides: a task's own verify command, as ralph plan
// writes it under the task ("Verify: `CMD` passes") or as a person writes
// it ("verify: CMD"), runs after the run's --verify and decides: the task
// whose command fails is not done though its worker said it was, the one
// whose command passes is; and the worker was told which commands decide.
func TestPlanTaskVerifyDecides(t *testing.T) {
	t.Parallel()
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	var told []string
	var mu sync.Mutex
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		for _, m := range msgs {
			sub := taskPromptRe.FindStringSubmatch(m.Content)
			if m.Role != openai.ChatMessageRoleUser || sub == nil {
				continue
			}
			switch {
			case last.Role == openai.ChatMessageRoleUser:
				mu.Lock()
				told = append(told, m.Content)
				mu.Unlock()
				if sub[1] == "t2" {
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: args(map[string]string{"path": "t2.txt", "content": "ok\n"})}}}
				}
				return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": sub[1], "summary": "done"})}}}
			case last.Name == "write_file":
				return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": sub[1], "summary": "done"})}}}
			case last.Name == "complete_task":
				mu.Lock()
				told = append(told, last.Content)
				mu.Unlock()
			}
			return llmtest.Response{Text: "done"}
		}
		return llmtest.Response{Text: "nothing to do"}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), "# Tasks\n\n"+
		"- [ ] write t1.txt <!-- ralph:id=t1 -->\n  Acceptance criteria:\n  - Verify: `test -f t1.txt` passes\n"+
		"- [ ] write t2.txt <!-- ralph:id=t2 -->\n  verify: test -f t2.txt\n")
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run", "--retries", "0", "--verify", "test -f RALPH_TASKS.md")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if !strings.Contains(tasks, "- [!] write t1.txt") || !strings.Contains(tasks, "- [x] write t2.txt") {
		t.Fatalf("tasks:\n%s", tasks)
	}
	errs := readFileT(t, filepath.Join(sessionDir(t, dir), "errors.jsonl"))
	if !strings.Contains(errs, "(`test -f t1.txt` did not pass)") {
		t.Fatalf("the failure does not name the task's command:\n%s", errs)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(told, "\n")
	for _, want := range []string{"ralph runs `test -f RALPH_TASKS.md`, then `test -f t1.txt`; the task is done only if every one passes",
		"ralph runs `test -f RALPH_TASKS.md`, then `test -f t2.txt`"} {
		if strings.Count(all, want) != 2 { // the task prompt and complete_task's answer
			t.Fatalf("the worker was not told %q twice:\n%s", want, all)
		}
	}
	if strings.Contains(all, "ralph will verify it") {
		t.Fatalf("the worker was told something vague:\n%s", all)
	}
}

// TestPartialUndoHintDoesWhatItSays: after an undo that skipped a file the
// person edited, the hint's command, run exactly as printed, overwrites
// that file alone: a.txt stays as it was before the request, b.txt goes
// back to its state before it; and no message names a checkpoint ref.
func TestPartialUndoHintDoesWhatItSays(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	srv := writer(t)
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "write a and edit b"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	shIn(t, dir, `printf 'b1\nB2 changed\nb3\nmy line\n' > b.txt`)
	u := ralph(t, dir, env, nil, "undo")
	if u.code != 1 || !strings.Contains(u.stdout, "put back a.txt") || !strings.Contains(u.stdout, "skipped b.txt") {
		t.Fatalf("ralph undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	hint := hintCommand(t, u.stdout)
	if hint[0] != "ralph" {
		t.Fatalf("the hint is not a ralph command: %q", hint)
	}
	f := ralph(t, dir, env, nil, hint[1:]...)
	if f.code != 0 {
		t.Fatalf("%q: exit %d\n%s\n%s", hint, f.code, f.stdout, f.stderr)
	}
	if exists(filepath.Join(dir, "a.txt")) {
		t.Fatalf("%q put a.txt back as the model wrote it:\n%s", hint, f.stdout)
	}
	if got := readFileT(t, filepath.Join(dir, "b.txt")); got != "b1\nb2\nb3\n" {
		t.Fatalf("%q left b.txt as %q:\n%s", hint, got, f.stdout)
	}
	// Named, the session's last change is the undo (without a session,
	// ralph diff passes over what was undone).
	d := ralph(t, dir, env, nil, "diff", filepath.Base(sessionDir(t, dir)), "--json")
	for _, out := range []string{u.stdout, u.stderr, f.stdout, f.stderr, d.stdout, d.stderr} {
		if strings.Contains(out, "refs/") {
			t.Fatalf("a message names a checkpoint ref:\n%s", out)
		}
	}
	if !strings.Contains(d.stdout, `"what": "the undo of your last request`) {
		t.Fatalf("ralph diff of the last undo:\n%s", d.stdout)
	}
}

// hintCommand is the command the undo's "skipped" line names, as words.
func hintCommand(t *testing.T, out string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "skipped ") {
			continue
		}
		if _, rest, ok := strings.Cut(l, "`"); ok {
			if cmd, _, ok := strings.Cut(rest, "`"); ok {
				return strings.Fields(cmd)
			}
		}
		// The hint as ralph gave it before issue 43, unquoted.
		if _, rest, ok := strings.Cut(l, "; "); ok {
			if cmd, _, ok := strings.Cut(rest, " overwrites"); ok {
				return strings.Fields(cmd)
			}
		}
	}
	t.Fatalf("no command on the skipped line:\n%s", out)
	return nil
}

// TestPlannedTaskVerifyFailsIsNotDone: ralph plan writes a task with its
// verify command (test -f done.log); a worker that says the task is done
// without making it so does not get it marked done: the command ralph
// plan wrote decides, and the run exits 1.
func TestPlannedTaskVerifyFailsIsNotDone(t *testing.T) {
	t.Parallel()
	planner := plannerModel()
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		for _, m := range msgs {
			if sub := taskPromptRe.FindStringSubmatch(m.Content); sub != nil && m.Role == openai.ChatMessageRoleUser {
				if msgs[len(msgs)-1].Role == openai.ChatMessageRoleUser {
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": sub[1], "summary": "done, trust me"})}}}
				}
				return llmtest.Response{Text: "done"}
			}
		}
		return planner(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "plan", "add a cache"); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--retries", "0")
	if run.code != 1 {
		t.Fatalf("run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if !strings.Contains(tasks, "- [!] define the sqlite schema") || strings.Contains(tasks, "- [x]") {
		t.Fatalf("RALPH_TASKS.md:\n%s", tasks)
	}
}

// TestRalphexValidationRunsBesideVerify: a ralphex plan's validation
// commands decide each task after the run's own --verify, not only when
// --verify is left out.
func TestRalphexValidationRunsBesideVerify(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	plan := "# Plan: caching\n\n## Implementation Steps\n\n" +
		"### Task 1: add the interface\n\n- [ ] write it\n\n" +
		"## Validation Commands\n\n- `echo validation >> checks.log`\n"
	mustWrite(t, filepath.Join(dir, "docs", "plans", "cache.md"), plan)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run", "docs/plans/cache.md", "--verify", "echo verify >> checks.log")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "checks.log")); got != "verify\nvalidation\n" {
		t.Fatalf("the checks ran %q, want --verify then the plan's validation command", got)
	}
}
