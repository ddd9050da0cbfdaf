package workers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type fixedTool struct{ name, out string }

func (f fixedTool) Def() ToolDef { return ToolDef{Name: f.name, Description: "test"} }
func (f fixedTool) Run(context.Context, json.RawMessage) Result {
	return Result{Output: f.out}
}

func TestViewHidesReplacesAndAdds(t *testing.T) {
	ts, err := NewToolset(Options{Root: t.TempDir(), Approver: allowAll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	ts.Register(fixedTool{"spawn_agent", "spawned"})
	ts.Register(fixedTool{"complete_task", "real"})
	v := ts.View([]string{"spawn_agent"}, fixedTool{"complete_task", "claimed"}, fixedTool{"extra", "x"})
	var names []string
	for _, d := range v.Definitions() {
		names = append(names, d.Name)
	}
	got := strings.Join(names, ",")
	if strings.Contains(got, "spawn_agent") || !strings.HasSuffix(got, "complete_task,extra") || !strings.HasPrefix(got, "read_file") {
		t.Fatalf("definitions = %s", got)
	}
	if r := v.Call(context.Background(), "spawn_agent", nil); !r.IsError || !strings.Contains(r.Output, "not available") {
		t.Fatalf("hidden tool: %+v", r)
	}
	if r := v.Call(context.Background(), "complete_task", nil); r.Output != "claimed" {
		t.Fatalf("replaced tool: %+v", r)
	}
	if r := v.Call(context.Background(), "write_file", json.RawMessage(`{"path":"a.txt","content":"x"}`)); r.IsError {
		t.Fatalf("base tool through the view: %+v", r)
	}
	// The base is unchanged.
	if r := ts.Call(context.Background(), "complete_task", nil); r.Output != "real" {
		t.Fatalf("base changed: %+v", r)
	}
}
