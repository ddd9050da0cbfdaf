package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
)

// TestUpdatePlanChecksTheList: a list a face could not show truthfully is
// refused with one sentence the model can act on, and nothing is kept.
func TestUpdatePlanChecksTheList(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args, want string
	}{
		{`{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}`,
			"2 steps are in_progress, and at most one may be; mark the others pending or completed and call it again"},
		{`{"plan":[{"step":"a","status":"done"}]}`, `step 1 has status "done"; use pending, in_progress or completed`},
		{`{"plan":[{"step":"  ","status":"pending"}]}`, "step 1 is empty"},
		{`{"plan":"read the code"}`, `it needs {"plan": [{"step": "...", "status": "pending"}]}`},
	}
	for _, c := range cases {
		kept := false
		tool := newUpdatePlanTool(func(context.Context, memory.TodoList) error { kept = true; return nil })
		res := tool.Run(context.Background(), json.RawMessage(c.args))
		if !res.IsError || !strings.Contains(res.Output, c.want) || kept {
			t.Errorf("%s: %+v (kept %v), want an error with %q", c.args, res, kept, c.want)
		}
	}
}

// TestUpdatePlanKeepsTheList: a good list is handed on whole, trimmed, and
// the model reads back where it stands.
func TestUpdatePlanKeepsTheList(t *testing.T) {
	t.Parallel()
	var got memory.TodoList
	tool := newUpdatePlanTool(func(_ context.Context, l memory.TodoList) error { got = l; return nil })
	res := tool.Run(context.Background(), json.RawMessage(`{"explanation":"start","plan":[{"step":" read ","status":"completed"},{"step":"fix","status":"in_progress"},{"step":"test","status":"pending"}]}`))
	if res.IsError || res.Output != "todo list updated: 1 of 3 completed; in progress: fix" {
		t.Fatalf("result %+v", res)
	}
	want := memory.TodoList{Explanation: "start", Items: []memory.TodoItem{{Step: "read", Status: "completed"}, {Step: "fix", Status: "in_progress"}, {Step: "test", Status: "pending"}}}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Fatalf("kept %s, want %s", g, w)
	}
}

// TestUpdatePlanIsTodoWriteForHooks: Claude Code's name finds the tool, a
// hook sees TodoWrite's input shape, and a hook's updatedInput in that
// shape comes back as update_plan's arguments, the explanation kept.
func TestUpdatePlanIsTodoWriteForHooks(t *testing.T) {
	t.Parallel()
	if got := ByPeerName("TodoWrite"); got != ToolUpdatePlan {
		t.Fatalf("ByPeerName(TodoWrite) = %q", got)
	}
	if got := HookName(ToolUpdatePlan); got != "TodoWrite" {
		t.Fatalf("HookName = %q", got)
	}
	args := json.RawMessage(`{"explanation":"why","plan":[{"step":"read","status":"completed"},{"step":"fix","status":"in_progress"}]}`)
	in := hookInput("/p", ToolUpdatePlan, args)
	want := `{"todos":[{"activeForm":"read","content":"read","status":"completed"},{"activeForm":"fix","content":"fix","status":"in_progress"}]}`
	if got := mustJSON(t, in); got != want {
		t.Fatalf("hook input %s, want %s", got, want)
	}
	var updated map[string]any
	if err := json.Unmarshal([]byte(`{"todos":[{"content":"fix","status":"completed","activeForm":"Fixing"},{"content":"","status":"pending","activeForm":"Testing"}]}`), &updated); err != nil {
		t.Fatal(err)
	}
	back, err := fromHookInput("/p", ToolUpdatePlan, args, updated)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(back), `{"explanation":"why","plan":[{"step":"fix","status":"completed"},{"step":"Testing","status":"pending"}]}`; got != want {
		t.Fatalf("back %s, want %s", got, want)
	}
	if _, err := fromHookInput("/p", ToolUpdatePlan, args, map[string]any{"todos": "x"}); err == nil {
		t.Fatal("todos that are no list were taken")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
