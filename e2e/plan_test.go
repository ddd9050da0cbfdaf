package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/sashabaranov/go-openai"
)

// plannerModel is a stand-in model that plans as a real one would: it
// asks the person which store to use, writes a two-task plan naming the
// answer, splits the second task in three when asked to revise, and works
// tasks as taskChildModel does once ralph run gives it one.
func plannerModel() func(llmtest.RecordedRequest) llmtest.Response {
	child := taskChildModel()
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	plan := func(store string, split bool) string {
		tasks := []map[string]any{
			{"id": "schema", "title": "define the " + store + " schema", "acceptance_criteria": []string{"the tables exist"}, "verify": "test -f done.log", "priority": 1},
		}
		if split {
			for _, p := range []string{"read", "write", "expire"} {
				tasks = append(tasks, map[string]any{"id": "cache-" + p, "title": p + " through the cache", "depends_on": []string{"schema"}})
			}
		} else {
			tasks = append(tasks, map[string]any{"id": "cache", "title": "put the cache in front of " + store, "depends_on": []string{"schema"}})
		}
		return args(map[string]any{"title": "Cache", "goals": "Reads are served from a cache backed by " + store + ".", "tasks": tasks})
	}
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		planning := false
		for _, m := range msgs {
			if m.Role == "user" && strings.Contains(m.Content, "Plan this feature") {
				planning = true
			}
		}
		if !planning {
			return child(r)
		}
		last := msgs[len(msgs)-1]
		switch {
		case last.Role == "user" && !strings.Contains(last.Content, "Plan this feature"):
			// ralph plan's "revise", or what the person says in chat.
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_plan", Arguments: plan(storeOf(msgs), true)}}}
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "ask_user", Arguments: args(map[string]any{
				"question": "Which store should back the cache?", "choices": []string{"postgres", "sqlite"}})}}}
		case last.Role == "tool" && last.Name == "ask_user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_plan", Arguments: plan(storeOf(msgs), false)}}}
		}
		return llmtest.Response{Text: "The plan has its tasks."}
	}
}

// storeOf is the person's answer to the planner's question, "sqlite"
// when nobody answered.
func storeOf(msgs []openai.ChatCompletionMessage) string {
	for _, m := range msgs {
		if a, ok := strings.CutPrefix(m.Content, "the person answered: "); ok && m.Role == "tool" {
			return strings.TrimSpace(a)
		}
	}
	return "sqlite"
}

const personsTasks = "# Tasks\n\nWritten by a person; kept as it is.\r\n\n- [x] an old task <!-- ralph:id=old -->\n"

// TestPlanHeadlessWritesAPlanThatRunCompletes: without a terminal the plan
// is written without asking and printed as JSON; it is in the task list's
// grammar beside the person's bytes, and ralph run then does it.
func TestPlanHeadlessWritesAPlanThatRunCompletes(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), personsTasks)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "plan", "add a cache")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Type  string
		Plan  struct{ Tasks []struct{ ID string } }
		Order []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Type != "plan" || strings.Join(out.Order, " ") != "schema cache" {
		t.Fatalf("plan --json: %v\n%s", err, r.stdout)
	}
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if !strings.HasPrefix(tasks, personsTasks) || !strings.Contains(tasks, "- [ ] define the sqlite schema <!-- ralph:id=schema priority=1 -->") ||
		!strings.Contains(tasks, "depends=schema") || !strings.Contains(tasks, "Verify: `test -f done.log` passes") {
		t.Fatalf("RALPH_TASKS.md:\n%s", tasks)
	}
	if goals := readFileT(t, filepath.Join(dir, "RALPH_GOALS.md")); !strings.Contains(goals, "## Cache\n\nReads are served from a cache backed by sqlite.") {
		t.Fatalf("RALPH_GOALS.md:\n%s", goals)
	}
	if run := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run"); run.code != 0 {
		t.Fatalf("run: exit %d\n%s", run.code, run.stderr)
	}
	if done := readFileT(t, filepath.Join(dir, "done.log")); done != "define the sqlite schema\nput the cache in front of sqlite\n" {
		t.Fatalf("done.log:\n%s", done)
	}
}

// TestPlanOnATerminal: the planner's question is answered at the
// terminal, the plan is shown, "revise" changes it, and "drop" leaves
// every file byte for byte as it was; a second plan is accepted.
func TestPlanOnATerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), personsTasks)
	env := chatEnv(t)

	r := startPTY(t, dir, env, "--base-url", srv.URL, "plan", "add a cache")
	// The answer prompt, not the question: the line announcing the
	// ask_user call names the question before the prompt is up.
	r.waitFor("your answer (1-2 or words) ›", 20*time.Second)
	r.waitFor("Which store should back the cache?", time.Second)
	r.typeKeys("postgres\r")
	r.waitFor("Accept the plan?", 20*time.Second)
	r.waitFor("put the cache in front of postgres", time.Second)
	r.typeKeys("r\r")
	r.waitFor("What should change?", 10*time.Second)
	r.typeKeys("split the cache task in three\r")
	r.waitFor("expire through the cache", 20*time.Second)
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(tasks, "cache-expire") || strings.Contains(tasks, "ralph:id=cache ") {
		t.Fatalf("the revision did not replace the plan:\n%s", tasks)
	}
	r.typeKeys("d\r")
	r.waitFor("dropped the plan", 10*time.Second)
	r.expectExit(0, 10*time.Second)
	if got := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); got != personsTasks {
		t.Fatalf("drop left RALPH_TASKS.md changed:\n%q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "RALPH_GOALS.md")); !os.IsNotExist(err) {
		t.Fatalf("drop left RALPH_GOALS.md behind: %v", err)
	}

	r = startPTY(t, dir, env, "--base-url", srv.URL, "plan", "add a cache")
	// The answer prompt, not the question: the line announcing the
	// ask_user call names the question before the prompt is up.
	r.waitFor("your answer (1-2 or words) ›", 20*time.Second)
	r.waitFor("Which store should back the cache?", time.Second)
	r.typeKeys("sqlite\r")
	r.waitFor("Accept the plan?", 20*time.Second)
	r.typeKeys("a\r")
	r.waitFor("Start it now with ralph run?", 10*time.Second)
	r.typeKeys("n\r")
	r.waitFor("start it when you like with: ralph run", 10*time.Second)
	r.expectExit(0, 10*time.Second)
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(tasks, "define the sqlite schema") {
		t.Fatalf("the accepted plan is not in the task list:\n%s", tasks)
	}
}

// TestPlanInChat: /plan in the chat shell is the same conversation: the
// question is answered at the prompt, the plan is written, a message
// revises it, and /plan drop puts every file back byte for byte.
func TestPlanInChat(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), personsTasks)
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	r.typeKeys("/plan add a cache\r")
	// The answer prompt, not the question: the line announcing the
	// ask_user call names the question before the prompt is up.
	r.waitFor("your answer (1-2 or words) ›", 20*time.Second)
	r.waitFor("Which store should back the cache?", time.Second)
	r.typeKeys("postgres\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "The plan has its tasks.") })
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(tasks, "define the postgres schema") {
		t.Fatalf("the plan is not in the task list:\n%s", tasks)
	}
	r.typeKeys("split the cache task in three\r")
	waitFor(t, "the revised plan", 20*time.Second, func() bool {
		return strings.Contains(readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")), "cache-expire")
	})
	r.waitIdle(20*time.Second, nil)
	r.typeKeys("/plan drop\r")
	r.waitFor("dropped the plan", 10*time.Second)
	if got := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); got != personsTasks {
		t.Fatalf("/plan drop left RALPH_TASKS.md changed:\n%q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "RALPH_GOALS.md")); !os.IsNotExist(err) {
		t.Fatalf("/plan drop left RALPH_GOALS.md behind: %v", err)
	}
	r.leave(0, 20*time.Second)
	// The session's first words are the person's feature, not ralph's
	// instructions about planning (issue 57).
	if out := ralph(t, dir, chatEnv(t), nil, "sessions"); !strings.Contains(out.stdout, "add a cache") || strings.Contains(out.stdout, "Plan this feature") {
		t.Fatalf("ralph sessions does not show the person's first words:\n%s", out.stdout)
	}
}
