package tools

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/spf13/afero"
)

var updateGolden = flag.Bool("update", false, "rewrite workers/tools/testdata/tools.golden.json from the tools as they are")

// goldenTool is one tool as the model sees it, kept in
// testdata/tools.golden.json: the contract the typed params structs must
// keep (docs/tools.md, the table of tools).
type goldenTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// goldenDefs are the definitions of every tool this package makes, with
// run_command's sandbox sentence left out (danger-full-access adds none),
// then the task loop's complete_task (the coordinator's claim tool),
// spawn_agent (the coordinator's own), the review's three, and last
// update_plan (built with the session's todo keeper), and diagnostics
// (offered only where a language server may start).
func goldenDefs(t *testing.T) []ToolDef {
	ts := newTestToolset(t, Options{Options: workers.Options{Sandbox: sandbox.FullAccess}})
	defs := ts.Definitions()
	fs := afero.NewMemMapFs()
	defs = append(defs,
		newRememberTool(fs, "/p", memory.NewRedactor()).Def(),
		newCompleteTaskTool(fs, "/p", memory.NewRedactor()).Def(),
		newRecordDecisionTool(func(memory.DecisionRecord) error { return nil }).Def(),
		newAskUserTool(nil).Def(),
		Def("complete_task_loop"),
		Def("skill"),
		Def("spawn_agent"),
		Def("report_findings"),
		Def("judge_findings"),
		Def("fixes_done"),
		Def("update_plan"),
		Def("diagnostics"),
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

// TestRunCommandDescriptionAddsSandbox checks that the dynamic part of
// run_command's description (the sandbox) follows the static run_command.md.
func TestRunCommandDescriptionAddsSandbox(t *testing.T) {
	ts := newTestToolset(t, Options{})
	for _, d := range ts.Definitions() {
		if d.Name != ToolRunCommand {
			continue
		}
		static := Def("run_command").Description
		if !strings.HasPrefix(d.Description, static+" Commands run in a sandbox (") {
			t.Errorf("run_command description = %q, want run_command.md then the sandbox", d.Description)
		}
		return
	}
	t.Fatal("no run_command")
}

// TestSchemaFromParams checks the generator on every kind of field the
// params structs use.
func TestSchemaFromParams(t *testing.T) {
	type params struct {
		S      string          `json:"s" required:"true" description:"a \"quoted\" <string>"`
		I      int             `json:"i"`
		F      *float64        `json:"f" minimum:"0" maximum:"1"`
		B      bool            `json:"b,omitempty"`
		L      []string        `json:"l"`
		R      json.RawMessage `json:"r" type:"array" items:"string" required:"true"`
		Hidden string          `json:"-"`
		none   string
	}
	_ = params{}.none
	want := `{"type":"object","properties":{"s":{"type":"string","description":"a \"quoted\" <string>"},` +
		`"i":{"type":"integer"},"f":{"type":"number","minimum":0,"maximum":1},"b":{"type":"boolean"},` +
		`"l":{"type":"array","items":{"type":"string"}},"r":{"type":"array","items":{"type":"string"}}},"required":["s","r"]}`
	if got := string(Schema(params{})); got != want {
		t.Errorf("Schema:\n got %s\nwant %s", got, want)
	}
	if got := Required(&params{}); !reflect.DeepEqual(got, []string{"s", "r"}) {
		t.Errorf("Required = %q", got)
	}
	var p params
	err := decodeArgs("t", json.RawMessage(`{"s":"x"}`), &p)
	if err == nil || err.Error() != `t is missing the required argument "r"` {
		t.Errorf("decodeArgs without r: %v", err)
	}
}
