package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Every question ralph asks on a terminal takes one key: a key it does
// not offer is answered at once with the keys it takes, and the question
// goes on waiting for one of them, which answers without Enter. These
// tests press an unoffered key, then an offered one, at each kind of
// question: a chat approval, a one-shot approval, and ralph plan's accept
// and start-now questions.

// hintLimit is how long the hint for an unoffered key may take: "at once"
// on a machine busy with other tests.
const hintLimit = 3 * time.Second

func TestPromptsChatApprovalUnofferedKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := inlineServer(t, commandScenario(t, [][]string{{"touch one"}}, "All done."))
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("go\r")
	r.waitFor("run `touch one`?", 10*time.Second)
	r.typeKeys("x")
	r.waitFor("press y, n, t, a, p or ?", hintLimit)
	if _, cur := r.out.Screen(); strings.Contains(cur, "x") {
		t.Fatalf("the unoffered key went into the prompt's line %q", cur)
	}
	// ? says what "always" allows, which the question itself only
	// points to, and the question goes on waiting.
	r.typeKeys("?")
	r.waitFor("From then on a command runs without asking", hintLimit)
	r.typeKeys("y")
	r.waitFor("All done.", 10*time.Second)
	if !exists(filepath.Join(dir, "one")) {
		t.Fatalf("the approved command did not run:\n%s", r.screen())
	}
	r.waitIdle(5*time.Second, nil)
	r.typeKeys("\x04")
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if after := r.stty(); after != r.sttyBefore {
		t.Fatalf("stty -a changed:\nbefore:\n%s\nafter:\n%s", r.sttyBefore, after)
	}
}

func TestPromptsOneShotApprovalUnofferedKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := inlineServer(t, commandScenario(t, [][]string{{"touch one"}}, "Finished."))
	r := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL, "make a file")
	r.waitFor("run `touch one`?", 10*time.Second)
	r.typeKeys("x")
	r.waitFor("press y, n, t, a, p or ?", hintLimit)
	r.typeKeys("y")
	r.waitFor("Finished.", 10*time.Second)
	if code := r.exitCode(10 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !exists(filepath.Join(dir, "one")) {
		t.Fatalf("the approved command did not run:\n%s", r.screen())
	}
	if after := r.stty(); after != r.sttyBefore {
		t.Fatalf("stty -a changed:\nbefore:\n%s\nafter:\n%s", r.sttyBefore, after)
	}
}

func TestPromptsPlanUnofferedKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), personsTasks)
	r := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL, "plan", "add a cache")
	r.waitFor("your answer (1-2 or words) ›", 20*time.Second)
	r.typeKeys("sqlite\r")
	r.waitFor("Accept the plan?", 20*time.Second)
	// The plan's task list is introduced by a line as a person writes
	// it, not by markdown's raw "##".
	if s := r.screen(); !strings.Contains(s, "Tasks, in the order ralph run takes them:") || strings.Contains(s, "## Tasks") {
		t.Fatalf("the plan view's heading:\n%s", s)
	}
	r.typeKeys("x")
	r.waitFor("press a, r, e or d", hintLimit)
	r.typeKeys("a")
	r.waitFor("Start it now with ralph run?", hintLimit)
	r.typeKeys("x")
	r.waitFor("press y or n", hintLimit)
	r.typeKeys("n")
	r.waitFor("start it when you like with: ralph run", hintLimit)
	if code := r.exitCode(10 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(string(tasks), "define the sqlite schema") {
		t.Fatalf("the accepted plan is not in the task list:\n%s", tasks)
	}
	if after := r.stty(); after != r.sttyBefore {
		t.Fatalf("stty -a changed:\nbefore:\n%s\nafter:\n%s", r.sttyBefore, after)
	}
}
