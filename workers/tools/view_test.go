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

// viewToolset is a toolset with the file tools on an empty project.
func viewToolset(t *testing.T) *Toolset {
	t.Helper()
	ts, err := NewToolset(Options{Approver: allowAll, Options: workers.Options{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	ts.Add(Deps{Fs: afero.NewMemMapFs(), Root: "/p", Redact: memory.NewRedactor()})
	return ts
}

func TestViewFiltersByRoleReplacesAndAdds(t *testing.T) {
	ts := viewToolset(t)
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

// Only narrows a view to the tools named, its own added tools included,
// refuses a call to any other, offers nothing the view did not, and
// leaves the view it came from as it was.
func TestViewOnlyNarrows(t *testing.T) {
	ts := viewToolset(t)
	v := ts.For(RoleChild, fixedTool{"extra", "x"})
	n := v.Only([]string{"read_file", "extra", "spawn_agent"})
	var names []string
	for _, d := range n.Definitions() {
		names = append(names, d.Name)
	}
	if got := strings.Join(names, ","); got != "read_file,extra" {
		t.Fatalf("narrowed definitions = %s", got)
	}
	if r := n.Call(context.Background(), "write_file", json.RawMessage(`{"path":"a.txt","content":"x"}`)); !r.IsError || !strings.Contains(r.Output, "not available") {
		t.Fatalf("a tool narrowed away ran: %+v", r)
	}
	if r := n.Call(context.Background(), "extra", nil); r.Output != "x" {
		t.Fatalf("an added tool kept: %+v", r)
	}
	if len(v.Definitions()) <= len(n.Definitions()) {
		t.Fatal("Only changed the view it came from")
	}
}
