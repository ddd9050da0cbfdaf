package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The todo list (issue 70): update_plan sets the model's working list for
// the session, which every face shows, the session's records keep, and a
// resumed session has back.

// todoPlan is the list the stand-in model sets, and todoLine how ralph
// logs shows it.
const (
	todoPlan = `{"explanation":"three steps","plan":[{"step":"read the code","status":"completed"},` +
		`{"step":"fix the bug","status":"in_progress"},{"step":"run the tests","status":"pending"}]}`
	todoLine    = "☰ todo 1/3: ☑ read the code · ◐ fix the bug · ☐ run the tests"
	resumedTodo = "[ralph: the session resumed; your todo list (update_plan) stands as you left it]\n" +
		"- [completed] read the code\n- [in_progress] fix the bug\n- [pending] run the tests"
)

// todoModel calls update_plan for the first prompt it is sent, then
// answers; a prompt after that is answered at once.
func todoModel(t *testing.T) *llmtest.Server {
	return answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		users := 0
		for _, m := range msgs {
			if m.Role == "user" {
				users++
			}
		}
		switch {
		case last.Role == "user" && users == 1:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "update_plan", Arguments: todoPlan}}}
		case last.Role == "tool":
			return llmtest.Response{Text: "Planned."}
		}
		return llmtest.Response{Text: "Going on."}
	})
}

// TestTodoListOneShotRecordedAndResumed: a one-shot whose model calls
// update_plan prints the list as a todo_updated line of stream-json, keeps
// it in the session's record (session.json) and events.jsonl, and ralph
// logs shows it as one line. ralph -c gives it back to the model in the
// turn, beside the prompt, while the system prompt stays byte for byte
// the first run's (caching).
func TestTodoListOneShotRecordedAndResumed(t *testing.T) {
	t.Parallel()
	srv := todoModel(t)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	r := ralph(t, dir, env, nil, "--output-format", "stream-json", "plan the fix")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var line map[string]any
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, `"type":"todo_updated"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	todo, _ := line["todo"].(map[string]any)
	items, _ := todo["items"].([]any)
	if line["schema_version"] != 1.0 || line["agent_id"] != "main" || todo["explanation"] != "three steps" || len(items) != 3 ||
		items[1].(map[string]any)["status"] != "in_progress" {
		t.Fatalf("the todo_updated line is %v\n%s", line, r.stdout)
	}
	sess := sessionDir(t, dir)
	var st struct {
		Todo struct {
			Items []struct{ Step, Status string }
		}
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(sess, "session.json"))), &st); err != nil || len(st.Todo.Items) != 3 ||
		st.Todo.Items[0].Step != "read the code" || st.Todo.Items[2].Status != "pending" {
		t.Fatalf("session.json has the todo list %+v (%v)", st.Todo, err)
	}
	if ev := readFileT(t, filepath.Join(sess, "events.jsonl")); !strings.Contains(ev, `"type":"todo_updated"`) {
		t.Fatalf("events.jsonl has no todo_updated:\n%s", ev)
	}
	if logs := ralph(t, dir, env, nil, "logs"); !strings.Contains(logs.stdout, todoLine) {
		t.Fatalf("ralph logs does not show %q:\n%s\n%s", todoLine, logs.stdout, logs.stderr)
	}

	r = ralph(t, dir, env, nil, "-c", "--output-format", "json", "go on")
	if r.code != 0 {
		t.Fatalf("resumed: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The json result carries the list the session keeps, though this
	// run did not change it: a script reads it without the event stream.
	var res struct {
		Todo *struct {
			Items []struct{ Step, Status string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Todo == nil || len(res.Todo.Items) != 3 ||
		res.Todo.Items[1].Status != "in_progress" {
		t.Fatalf("the json result has no todo list (%v):\n%s", err, r.stdout)
	}
	reqs := srv.Requests()
	first, resumed := reqs[0].Request.Messages, reqs[len(reqs)-1].Request.Messages
	if first[0].Role != "system" || resumed[0].Content != first[0].Content {
		t.Fatalf("the resumed run's system prompt changed:\n%q\n%q", first[0].Content, resumed[0].Content)
	}
	if strings.Contains(first[0].Content, "read the code") {
		t.Fatalf("the todo list is in the system prompt:\n%s", first[0].Content)
	}
	last := resumed[len(resumed)-1]
	if last.Role != "user" || !strings.Contains(last.Content, resumedTodo) || !strings.HasSuffix(last.Content, "go on") {
		t.Fatalf("the resumed turn does not carry the list:\n%s", last.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, "RALPH_TASKS.md")); err == nil {
		t.Fatal("the todo list wrote RALPH_TASKS.md")
	}
}

// TestTodoListInWatch: ralph watch, from another terminal, shows the list
// the running one-shot's model set, as its one line.
func TestTodoListInWatch(t *testing.T) {
	t.Parallel()
	seen := newStreamGate(t)
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if msgs[len(msgs)-1].Role == "user" {
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "update_plan", Arguments: todoPlan}}}
		}
		return llmtest.Response{Text: "Planned.", Hold: seen.Wait}
	})
	seen.Hold()
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	cmd, _, _ := startRalph(t, dir, env, "plan the fix")
	waitSocket(t, dir, env)
	w := exec.Command(ralphBin, "watch")
	w.Dir, w.Env = dir, env
	wout, werr := &lockedBuffer{}, &lockedBuffer{}
	w.Stdout, w.Stderr = wout, werr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	waitFor(t, "the todo line in the watch", 30*time.Second, func() bool { return strings.Contains(wout.String(), todoLine) })
	seen.Open()
	if code, _ := exitCode(t, cmd, 30*time.Second); code != 0 {
		t.Fatalf("the run exited %d", code)
	}
	if code, _ := exitCode(t, w, 10*time.Second); code != 0 {
		t.Fatalf("the watch exited %d: %s\n%s", code, wout.String(), werr.String())
	}
}
