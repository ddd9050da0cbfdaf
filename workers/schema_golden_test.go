package workers

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/spf13/afero"
)

var updateGolden = flag.Bool("update", false, "rewrite workers/testdata/tools.golden.json from the tools as they are")

// goldenTool is one tool as the model sees it, kept in
// testdata/tools.golden.json: the contract the typed params structs must
// keep (DESIGN.md, "Tool names the model sees").
type goldenTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// goldenDefs are the definitions of every tool this package makes, with
// run_command's sandbox sentence left out (danger-full-access adds none).
func goldenDefs(t *testing.T) []ToolDef {
	ts := newTestToolset(t, Options{Sandbox: sandbox.FullAccess})
	defs := ts.Definitions()
	fs := afero.NewMemMapFs()
	defs = append(defs,
		NewRememberTool(fs, "/p", memory.NewRedactor()).Def(),
		NewCompleteTaskTool(fs, "/p", memory.NewRedactor()).Def(),
		NewRecordDecisionTool(func(memory.DecisionRecord) error { return nil }).Def(),
	)
	return defs
}

// TestToolSchemasGolden checks that every tool's name, description and
// JSON schema are what they were when the golden file was written: the
// same properties, types, descriptions and required list.
func TestToolSchemasGolden(t *testing.T) {
	path := filepath.Join("testdata", "tools.golden.json")
	defs := goldenDefs(t)
	if *updateGolden {
		var out []goldenTool
		for _, d := range defs {
			var v any
			if err := json.Unmarshal(d.Parameters, &v); err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
			p, _ := json.Marshal(v)
			out = append(out, goldenTool{Name: d.Name, Description: d.Description, Parameters: p})
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []goldenTool
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(defs) != len(want) {
		t.Fatalf("%d tools, golden has %d", len(defs), len(want))
	}
	for i, d := range defs {
		w := want[i]
		if d.Name != w.Name {
			t.Errorf("tool %d is %s, golden has %s", i, d.Name, w.Name)
			continue
		}
		if d.Description != w.Description {
			t.Errorf("%s description:\n got %q\nwant %q", d.Name, d.Description, w.Description)
		}
		var got, exp any
		if err := json.Unmarshal(d.Parameters, &got); err != nil {
			t.Errorf("%s parameters: %v", d.Name, err)
			continue
		}
		_ = json.Unmarshal(w.Parameters, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s parameters:\n got %s\nwant %s", d.Name, d.Parameters, w.Parameters)
		}
	}
}
