package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The tools ralph offers each model family are checked, in
// workers/tools, against recordings of what the models' makers offer
// them: codex's requests (testdata/codex-tools) and claude's
// (testdata/claude-code-tools). These tests keep those recordings honest
// and check what the recordings cannot: the real codex 0.77.0 run with
// each model name against the stand-in sends the recorded tools, and the
// Claude family's shapes are those of the Claude Agent SDK's published
// types, Glob, Grep and TodoWrite among them, which claude itself no
// longer sends (e2e/setup.sh installs both references).

// TestCodexToolsAreRecorded runs codex 0.77.0 against the stand-in's
// Responses API with each model name recorded in testdata/codex-tools and
// compares the tools of its first request with the recording.
// RALPH_RECORD=1 writes the recordings anew.
func TestCodexToolsAreRecorded(t *testing.T) {
	t.Parallel()
	codex := needTool(t, "codex-0.77", "npm's @openai/codex@0.77.0")
	files, err := filepath.Glob(filepath.Join("..", "testdata", "codex-tools", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("the codex recordings: %v, %d files", err, len(files))
	}
	for _, file := range files {
		model := strings.TrimSuffix(filepath.Base(file), ".json")
		if strings.HasPrefix(model, "exchange-") {
			continue
		}
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "done"} })
			t.Cleanup(srv.Close)
			home := t.TempDir()
			mustWrite(t, filepath.Join(home, "config.toml"), fmt.Sprintf(`model = %q
model_provider = "stand-in"

[model_providers.stand-in]
name = "stand-in"
base_url = %q
env_key = "STAND_IN_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, model, srv.URL))
			dir := t.TempDir()
			cmd := exec.Command(codex, "exec", "--skip-git-repo-check", "say done")
			cmd.Dir = dir
			cmd.Env = cleanEnv(t, "CODEX_HOME="+home, "STAND_IN_API_KEY=fake-codex-key", "TMPDIR="+t.TempDir())
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatalf("codex 0.77.0 sent nothing (%v):\n%s", err, out)
			}
			var got map[string]any
			if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var rec map[string]any
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if os.Getenv("RALPH_RECORD") == "1" {
				for _, k := range []string{"model", "tool_choice", "parallel_tool_calls", "reasoning", "store", "include", "stream", "tools"} {
					rec[k] = got[k]
				}
				b, _ := json.MarshalIndent(rec, "", " ")
				mustWrite(t, file, string(b)+"\n")
				return
			}
			for _, k := range []string{"tools", "reasoning", "store", "include"} {
				if !reflect.DeepEqual(got[k], rec[k]) {
					g, _ := json.Marshal(got[k])
					t.Errorf("codex 0.77.0 sends %s a %s that differs from testdata/codex-tools/%s.json (RALPH_RECORD=1 records it anew):\n%s",
						model, k, model, g)
				}
			}
		})
	}
}

// tsField is one field of a TypeScript interface of sdk-tools.d.ts.
type tsField struct {
	typ      string // string, number, boolean, array or object
	optional bool
}

// sdkInterfaces reads the interfaces of Claude Code's published tool
// input types: for each, its fields, their JSON types and whether they
// are optional. It reads only the shape the generated file has (one
// field a line, `name?: type;`, nested objects and arrays of objects
// skipped past as one field).
func sdkInterfaces(t *testing.T, src string) map[string]map[string]tsField {
	t.Helper()
	out := map[string]map[string]tsField{}
	head := regexp.MustCompile(`^export interface (\w+) \{$`)
	field := regexp.MustCompile(`^  (?:"([^"]+)"|(\w+))(\??): (.*)$`)
	var cur map[string]tsField
	depth := 0
	pending := "" // a field whose type is a block: an object, or an array of them when it closes with }[]
	for _, line := range strings.Split(src, "\n") {
		if m := head.FindStringSubmatch(line); m != nil {
			cur, depth = map[string]tsField{}, 1
			out[m[1]] = cur
			continue
		}
		if cur == nil {
			continue
		}
		if depth == 1 {
			if m := field.FindStringSubmatch(line); m != nil {
				name := m[1] + m[2]
				typ := strings.TrimSuffix(strings.TrimSpace(m[4]), ";")
				var jt string
				switch {
				case strings.HasSuffix(typ, "[]") || strings.HasPrefix(typ, "{") && strings.Contains(typ, "}[]"):
					jt = "array"
				case typ == "{":
					jt = "object" // until its block closes with }[]
				case typ == "string" || strings.HasPrefix(typ, `"`):
					jt = "string"
				case typ == "number":
					jt = "number"
				case typ == "boolean":
					jt = "boolean"
				default:
					jt = typ
				}
				cur[name] = tsField{typ: jt, optional: m[3] == "?"}
				if typ == "{" {
					pending = name
				}
			}
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if depth == 1 && pending != "" && strings.HasPrefix(strings.TrimSpace(line), "}") {
			if strings.HasPrefix(strings.TrimSpace(line), "}[]") {
				f := cur[pending]
				f.typ = "array"
				cur[pending] = f
			}
			pending = ""
		}
		if depth <= 0 {
			cur = nil
		}
	}
	return out
}

// TestClaudeFamilyMatchesTheSDKTypes compares the Claude family's tools
// (their golden file, which workers/tools holds to the code) with the
// Claude Agent SDK's sdk-tools.d.ts: every property ralph offers is a
// field of Claude Code's input type with its type, and ralph requires
// what the type requires.
func TestClaudeFamilyMatchesTheSDKTypes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(filepath.Dir(testCacheBin()), "ref", "sdk-tools.d.ts")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the Claude Agent SDK's sdk-tools.d.ts (%v) is not there, and this test needs it: %s fetches it", err, setupCommand)
	}
	types := sdkInterfaces(t, string(src))
	b, err := os.ReadFile(filepath.Join("..", "workers", "tools", "testdata", "tools.claude.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var defs []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(b, &defs); err != nil {
		t.Fatal(err)
	}
	// Claude Code's tool names and their input types (the SDK's union
	// ToolInputSchemas; Task is AgentInput, its name before Claude Code
	// 2.0). TaskOutput has no published type; claude's own recording
	// holds it (workers/tools TestClaudeFamilyIsClaudeCodesTools).
	inputs := map[string]string{"Bash": "BashInput", "Read": "FileReadInput", "Write": "FileWriteInput", "Edit": "FileEditInput",
		"Glob": "GlobInput", "Grep": "GrepInput", "TodoWrite": "TodoWriteInput", "WebFetch": "WebFetchInput", "Task": "AgentInput",
		"TaskStop": "TaskStopInput"}
	checked := 0
	for _, d := range defs {
		iface, ok := inputs[d.Name]
		if !ok {
			continue
		}
		fields := types[iface]
		if len(fields) == 0 {
			t.Errorf("sdk-tools.d.ts has no interface %s (or it has no fields)", iface)
			continue
		}
		checked++
		var schema struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(d.Parameters, &schema); err != nil {
			t.Fatal(err)
		}
		for name, p := range schema.Properties {
			f, ok := fields[name]
			if !ok {
				t.Errorf("Claude's %s has the property %s, which Claude Code's %s has not", d.Name, name, iface)
				continue
			}
			typ := p.Type
			if typ == "integer" {
				typ = "number"
			}
			if typ != f.typ {
				t.Errorf("Claude's %s.%s is a %s, Claude Code's a %s", d.Name, name, p.Type, f.typ)
			}
		}
		var want []string
		for name, f := range fields {
			if !f.optional {
				want = append(want, name)
			}
		}
		sort.Strings(want)
		sort.Strings(schema.Required)
		if !slices.Equal(want, schema.Required) {
			t.Errorf("Claude's %s requires %v, Claude Code's %s %v", d.Name, schema.Required, iface, want)
		}
	}
	if checked != len(inputs) {
		t.Errorf("%d of the %d tools of Claude Code's were compared", checked, len(inputs))
	}
}
