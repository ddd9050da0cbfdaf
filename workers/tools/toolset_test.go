package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
)

func TestNewToolsetRejectsBadRoot(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewToolset(Options{Options: workers.Options{Root: filepath.Join(dir, "missing")}}); err == nil {
		t.Error("missing root: expected an error")
	}
	file := filepath.Join(dir, "file")
	writeTestFile(t, file, "x")
	if _, err := NewToolset(Options{Options: workers.Options{Root: file}}); err == nil {
		t.Error("file as root: expected an error")
	}
	if _, err := NewToolset(Options{}); err == nil {
		t.Error("empty root: expected an error")
	}
}

func TestRootResolvesSymlink(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	ts := newTestToolset(t, Options{Options: workers.Options{Root: link}})
	want, _ := filepath.EvalSymlinks(real)
	if ts.Root() != want {
		t.Fatalf("Root() = %q, want %q", ts.Root(), want)
	}
	// An absolute path spelled through the symlinked root is inside it.
	writeTestFile(t, filepath.Join(real, "a.txt"), "hi\n")
	out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": filepath.Join(link, "a.txt")}))
	if !strings.HasSuffix(out, "\nhi\n") {
		t.Fatalf("read through symlinked root: %q", out)
	}
}

func TestDefinitions(t *testing.T) {
	ts := newTestToolset(t, Options{})
	want := []string{"read_file", "write_file", "edit_file", "apply_patch", "list_files", "search", "run_command", "command_output", "stop_command", "web_fetch"}
	var got []string
	for _, d := range ts.Definitions() {
		got = append(got, d.Name)
		if d.Description == "" {
			t.Errorf("%s has no description", d.Name)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(d.Parameters, &schema); err != nil {
			t.Errorf("%s: parameters are not valid JSON: %v", d.Name, err)
		}
		if schema.Type != "object" {
			t.Errorf("%s: schema type %q", d.Name, schema.Type)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", d.Name, r)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("definitions %v, want %v", got, want)
	}
}

type fakeTool struct {
	name, out string
}

func (f fakeTool) Def() ToolDef {
	return ToolDef{Name: f.name, Description: "fake", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (f fakeTool) Run(context.Context, json.RawMessage) workers.Result {
	return workers.Result{Output: f.out}
}

func TestRegisterAddsAndReplacesInPlace(t *testing.T) {
	ts := newTestToolset(t, Options{})
	ts.Register(fakeTool{name: "spawn_agent", out: "one"})
	ts.Register(fakeTool{name: "other", out: "x"})
	ts.Register(fakeTool{name: "spawn_agent", out: "two"})
	defs := ts.Definitions()
	if len(defs) != 12 || defs[10].Name != "spawn_agent" || defs[11].Name != "other" {
		t.Fatalf("unexpected order: %v", defs)
	}
	if out := mustOK(t, call(t, ts, "spawn_agent", nil)); out != "two" {
		t.Fatalf("replaced tool returned %q", out)
	}
	// Replacing a built-in keeps its place.
	ts.Register(fakeTool{name: "read_file", out: "fake read"})
	if ts.Definitions()[0].Description != "fake" {
		t.Fatal("built-in was not replaced in place")
	}
}

func TestCallCapsRegisteredToolOutput(t *testing.T) {
	ts := newTestToolset(t, Options{Options: workers.Options{MaxOutputBytes: 100}})
	ts.Register(fakeTool{name: "big", out: "START" + strings.Repeat("x", 10000) + "END"})
	out := mustOK(t, call(t, ts, "big", nil))
	if len(out) > 100+resultSlack+50 || !strings.HasPrefix(out, "START") || !strings.HasSuffix(out, "END") ||
		!strings.Contains(out, "bytes omitted") {
		t.Fatalf("bad cap (%d bytes): %.200q", len(out), out)
	}
}

func TestUnknownTool(t *testing.T) {
	ts := newTestToolset(t, Options{})
	res := call(t, ts, "delete_everything", nil)
	mustErr(t, res, `unknown tool "delete_everything"`)
	mustErr(t, res, "read_file, write_file, edit_file, apply_patch, list_files, search, run_command")
}

func TestInvalidArguments(t *testing.T) {
	ts := newTestToolset(t, Options{})
	cases := []struct {
		tool, args, want string
	}{
		{"read_file", `{not json`, "must be a JSON object"},
		{"read_file", `[1,2]`, "must be a JSON object"},
		{"read_file", `"a.txt"`, "must be a JSON object"},
		{"read_file", `{}`, `read_file is missing the required argument "path"`},
		{"read_file", `{"path": null}`, `missing the required argument "path"`},
		{"read_file", `{"path": 7}`, `argument "path" must be a string, not a number`},
		{"read_file", `{"path": "a", "offset": "3"}`, `argument "offset" must be a number, not a string`},
		{"read_file", `{"path": "a", "offset": 1.5}`, `argument "offset" must be a whole number`},
		{"write_file", `{"path": "a"}`, `missing the required argument "content"`},
		{"edit_file", `{"path": "a"}`, `edit_file needs old_string and new_string, or a list of edits`},
		{"edit_file", `{"path": "a", "old_string": "x"}`, `new_string is missing`},
		{"search", ``, `missing the required argument "pattern"`},
		{"run_command", `null`, `missing the required argument "command"`},
		{"run_command", `{"command": "true", "timeout_s": -1}`, "timeout_s must be a positive number"},
		{"run_command", `{"command": "  "}`, "non-empty command"},
	}
	for _, c := range cases {
		mustErr(t, call(t, ts, c.tool, c.args), c.want)
	}
}

func TestEmptyArgumentsMeanEmptyObject(t *testing.T) {
	ts := newTestToolset(t, Options{})
	writeTestFile(t, filepath.Join(ts.Root(), "a.txt"), "x")
	for _, args := range []string{"", "null", "  ", "{}"} {
		if out := mustOK(t, call(t, ts, "list_files", args)); out != "a.txt" {
			t.Fatalf("list_files with %q: %q", args, out)
		}
	}
}
