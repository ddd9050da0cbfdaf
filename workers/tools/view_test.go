package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
)

type fixedTool struct{ name, out string }

func (f fixedTool) Def() ToolDef { return ToolDef{Name: f.name, Description: "test"} }
func (f fixedTool) Run(context.Context, json.RawMessage) workers.Result {
	return workers.Result{Output: f.out}
}

func TestViewFiltersByRoleReplacesAndAdds(t *testing.T) {
	ts, err := NewToolset(Options{Approver: allowAll, Options: workers.Options{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	ts.Add(Deps{Fs: afero.NewMemMapFs(), Root: "/p", Redact: memory.NewRedactor()})
	claim := Build(Deps{Claim: func(context.Context, json.RawMessage) workers.Result { return workers.Result{Output: "claimed"} }})
	v := ts.For(RoleWorker, append(claim, fixedTool{"extra", "x"})...)
	var names []string
	for _, d := range v.Definitions() {
		names = append(names, d.Name)
	}
	got := strings.Join(names, ",")
	if !strings.HasSuffix(got, "complete_task,extra") || !strings.HasPrefix(got, "read_file") {
		t.Fatalf("definitions = %s", got)
	}
	if r := v.Call(context.Background(), "complete_task", nil); r.Output != "claimed" {
		t.Fatalf("replaced tool: %+v", r)
	}
	if r := v.Call(context.Background(), "write_file", json.RawMessage(`{"path":"a.txt","content":"x"}`)); r.IsError {
		t.Fatalf("base tool through the view: %+v", r)
	}
	// A child is offered neither complete_task, whose task list is the
	// coordinator's, nor the loop's, which is a worker's.
	child := ts.For(RoleChild, claim...)
	for _, d := range child.Definitions() {
		if d.Name == ToolCompleteTask {
			t.Fatalf("a child is offered %s", d.Name)
		}
	}
	if r := child.Call(context.Background(), "complete_task", json.RawMessage(`{"id":"t1","summary":"s"}`)); !r.IsError || !strings.Contains(r.Output, "not available") {
		t.Fatalf("hidden tool: %+v", r)
	}
}
