package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

const (
	calcGood = "package calc\n\nfunc Sub(a, b int) int { return a - b }\n"
	calcBug  = "package calc\n\nfunc Sub(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a * b }\n"
	calcFix  = "package calc\n\nfunc Sub(a, b int) int { return a - b }\n\nfunc Mul(a, b int) int { return a * b }\n"
)

// reviewModel is a stand-in model for a review: the correctness reviewer
// finds the planted bug while the patch still holds it, the simplicity
// reviewer always has a minor quibble, the check confirms the bug and
// rejects the quibble, and the fixing agent writes the fix.
func reviewModel() func(llmtest.RecordedRequest) llmtest.Response {
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	call := func(name string, v any) llmtest.Response {
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args(v)}}}
	}
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		first := ""
		for _, m := range msgs {
			if m.Role == openai.ChatMessageRoleUser {
				first = m.Content
				break
			}
		}
		last := msgs[len(msgs)-1]
		if last.Role == openai.ChatMessageRoleTool && (last.Name == "report_findings" || last.Name == "judge_findings" || last.Name == "fixes_done") {
			return llmtest.Response{Text: "done"}
		}
		switch {
		case strings.Contains(first, "as the correctness reviewer"):
			var found []map[string]any
			if strings.Contains(first, "+func Sub(a, b int) int { return a + b }") {
				found = append(found, map[string]any{"file": "calc.go", "line": 3, "severity": "major", "why": "Sub adds instead of subtracting"})
			}
			return call("report_findings", map[string]any{"findings": found})
		case strings.Contains(first, "as the simplicity reviewer"):
			return call("report_findings", map[string]any{"findings": []map[string]any{
				{"file": "calc.go", "line": 5, "severity": "minor", "why": "Mul could be written on two lines"}}})
		case strings.Contains(first, "as the "):
			return call("report_findings", map[string]any{"findings": []any{}})
		case strings.Contains(first, "Reviewers reported the findings below"):
			var verdicts []map[string]string
			for _, id := range []string{"f1", "f2", "f3", "f4"} {
				if !strings.Contains(first, `"id": "`+id+`"`) {
					continue
				}
				v := map[string]string{"id": id, "verdict": "rejected", "reason": "a matter of taste, not a problem"}
				if strings.Contains(first, `"id": "`+id+`",
    "reviewer": "correctness"`) {
					v = map[string]string{"id": id, "verdict": "confirmed", "reason": "the code adds"}
				}
				verdicts = append(verdicts, v)
			}
			return call("judge_findings", map[string]any{"verdicts": verdicts})
		case strings.Contains(first, "A review of a change confirmed the findings below"):
			if last.Role == openai.ChatMessageRoleTool && last.Name == "write_file" {
				return call("fixes_done", map[string]string{"summary": "Sub subtracts again"})
			}
			return call("write_file", map[string]string{"path": "calc.go", "content": calcFix})
		}
		return llmtest.Response{Text: "nothing to do"}
	}
}

func reviewProject(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "calc.go"), calcGood)
	shIn(t, dir, "git init -q -b main && git add . && git commit -qm calc")
	mustWrite(t, filepath.Join(dir, "calc.go"), calcBug)
	return dir
}

// TestReviewFindsConfirmsAndFixes: a reviewer reports the planted bug,
// the check confirms it and rejects a quibble with its reason, an agent
// fixes it, and the second round is clean; every finding and the fix are
// decision records.
func TestReviewFindsConfirmsAndFixes(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(reviewModel())
	t.Cleanup(srv.Close)
	dir := reviewProject(t)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "review")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		Clean    bool
		Rounds   int
		Findings []struct{ ID, Reviewer, Severity, Verdict, Reason string }
		Fixes    []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if !rep.Clean || rep.Rounds != 2 || len(rep.Fixes) != 1 {
		t.Fatalf("review: %+v", rep)
	}
	var confirmed, rejected int
	for _, f := range rep.Findings {
		switch {
		case f.Reviewer == "correctness" && f.Verdict == "confirmed":
			confirmed++
		case f.Reviewer == "simplicity" && f.Verdict == "rejected" && f.Reason == "a matter of taste, not a problem":
			rejected++
		}
	}
	if confirmed != 1 || rejected != 2 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	if got := readFileT(t, filepath.Join(dir, "calc.go")); got != calcFix {
		t.Fatalf("calc.go after the review:\n%s", got)
	}
	decisions := readFileT(t, filepath.Join(sessionDir(t, dir), "decisions.jsonl"))
	if strings.Count(decisions, `"kind":"review_finding"`) != 3 || !strings.Contains(decisions, `"kind":"review_fix"`) ||
		!strings.Contains(decisions, "a matter of taste, not a problem") {
		t.Fatalf("decisions.jsonl:\n%s", decisions)
	}
}

// TestReviewFindingsOnlyChangesNothing: --findings-only prints what the
// reviewers found and leaves every byte of the project as it was.
func TestReviewFindingsOnlyChangesNothing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(reviewModel())
	t.Cleanup(srv.Close)
	dir := reviewProject(t)
	before := shIn(t, dir, "git status --porcelain --untracked-files=all -- . ':!.ralph' && git diff && git stash list")
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "review", "--findings-only")
	if r.code != 1 || !strings.Contains(r.stdout, "f1 calc.go:3 [major, correctness] Sub adds instead of subtracting") ||
		!strings.Contains(r.stdout, "nothing was checked or changed (--findings-only)") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after := shIn(t, dir, "git status --porcelain --untracked-files=all -- . ':!.ralph' && git diff && git stash list"); after != before {
		t.Fatalf("--findings-only changed the project:\n%s\nwas:\n%s", after, before)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(got) != calcBug {
		t.Fatal("calc.go changed")
	}
}

// TestRunReviewsEachTask: with --review task, a task whose work passed
// verify is reviewed before it counts: the planted bug is confirmed and
// fixed, the second round is clean, the task is done, and ralph report
// shows what reviewing cost.
func TestRunReviewsEachTask(t *testing.T) {
	t.Parallel()
	reviewer := reviewModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		for _, m := range msgs {
			if m.Role == openai.ChatMessageRoleUser && strings.Contains(m.Content, "Your task (") {
				last := msgs[len(msgs)-1]
				args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
				switch {
				case last.Role == openai.ChatMessageRoleUser:
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: args(map[string]string{"path": "calc.go", "content": calcBug})}}}
				case last.Name == "write_file":
					id := taskPromptRe.FindStringSubmatch(m.Content)[1]
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "added Mul"})}}}
				}
				return llmtest.Response{Text: "done"}
			}
		}
		return reviewer(r)
	})
	t.Cleanup(srv.Close)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "calc.go"), calcGood)
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), "- [ ] add Mul <!-- ralph:id=mul -->\n")
	shIn(t, dir, "git init -q -b main && git add . && git commit -qm calc")
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--review", "task")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "calc.go")); got != calcFix {
		t.Fatalf("calc.go after the reviewed task:\n%s", got)
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.HasPrefix(tasks, "- [x] add Mul") {
		t.Fatalf("the task is not done:\n%s", tasks)
	}
	decisions := readFileT(t, filepath.Join(sessionDir(t, dir), "decisions.jsonl"))
	for _, want := range []string{`"kind":"review_finding"`, "— confirmed", "— rejected", "a matter of taste, not a problem", `"kind":"review_fix"`, `"kind":"review_done"`} {
		if !strings.Contains(decisions, want) {
			t.Fatalf("decisions.jsonl lacks %q:\n%s", want, decisions)
		}
	}
	rep := ralph(t, dir, env, nil, "report")
	if !strings.Contains(rep.stdout, "## Reviews") || !strings.Contains(rep.stdout, "| `mul` | 1 |") {
		t.Fatalf("ralph report does not show the review's cost:\n%s", rep.stdout)
	}
}

// TestReviewByAnotherAgent: --reviewer runs the reviewers as another
// agent (here an exec: one), whose findings come back from the JSON list
// it prints.
func TestReviewByAnotherAgent(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(reviewModel())
	t.Cleanup(srv.Close)
	dir := reviewProject(t)
	script := filepath.Join(t.TempDir(), "reviewer.sh")
	mustWrite(t, script, "#!/usr/bin/env bash\nprompt=$(cat)\ncase \"$prompt\" in\n"+
		"  *'as the correctness reviewer'*) printf 'Found one.\\n```json\\n[{\"file\": \"calc.go\", \"line\": 3, \"severity\": \"major\", \"why\": \"Sub adds\"}]\\n```\\n' ;;\n"+
		"  *) printf 'Nothing.\\n```json\\n[]\\n```\\n' ;;\nesac\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "review", "--findings-only", "--reviewer", "exec:"+script)
	if r.code != 1 || !strings.Contains(r.stdout, "f1 calc.go:3 [major, correctness] Sub adds") || strings.Contains(r.stdout, "Mul could be written") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Fatalf("ralph's own model reviewed too: %d requests", len(reqs))
	}
}
