package tools

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// familyModel is a model of each family, as the tests name it.
var familyModel = map[providers.ToolFamily]string{
	providers.FamilyRalph: "gpt-4o-mini", providers.FamilyClaude: "claude-sonnet-4-5", providers.FamilyCodex: "gpt-5-codex",
	providers.FamilyGPT5: "gpt-5", providers.FamilyCodexMini: "codex-mini-latest", providers.FamilyGPTOSS: "gpt-oss-120b",
}

// familyDefs are the golden tools as model is offered them.
func familyDefs(t *testing.T, model string) []ToolDef {
	ts := newTestToolset(t, Options{Options: workers.Options{Sandbox: sandbox.FullAccess}})
	defs, _ := ts.Offer(model, goldenDefs(t), nil)
	return defs
}

// TestFamilyToolsGolden holds every family's tools as its models see
// them, one golden file a family (testdata/tools.<family>.golden.json;
// -update rewrites them): the names, descriptions and input shapes a
// model is offered are a contract as ralph's own are.
func TestFamilyToolsGolden(t *testing.T) {
	for fam, model := range familyModel {
		path := filepath.Join("testdata", "tools."+fam.Name()+".golden.json")
		defs := familyDefs(t, model)
		got, err := json.MarshalIndent(defs, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		if *updateGolden {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./workers/tools -run TestFamilyToolsGolden -update writes it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("the %s family's tools differ from %s (-update rewrites it after a deliberate change):\n%s", fam.Name(), path, got)
		}
	}
}

// recordedCodexTools are the tools codex 0.77.0 offered model, as
// recorded (testdata/codex-tools).
func recordedCodexTools(t *testing.T, model string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex-tools", model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range rec.Tools {
		name, _ := tool["name"].(string)
		if name == "" {
			name, _ = tool["type"].(string) // local_shell, web_search
		}
		out[name] = tool
	}
	return out
}

// TestCodexFamiliesAreCodexsTools compares what ralph offers each of
// OpenAI's models with what codex offers it (its recorded requests):
// the trained tools are all there, under codex's names, as the same kind
// of tool (function, freeform grammar, built-in), each property ralph
// sends is codex's with codex's type, and the required ones are codex's.
func TestCodexFamiliesAreCodexsTools(t *testing.T) {
	for model, trained := range map[string][]string{
		"gpt-5-codex": {"shell_command", "apply_patch", "update_plan", "view_image"}, "gpt-5.1-codex-mini": {"shell_command", "apply_patch", "update_plan", "view_image"},
		"gpt-5.1-codex-max": {"shell_command", "apply_patch", "update_plan", "view_image"}, "gpt-5.2-codex": {"shell_command", "apply_patch", "update_plan", "view_image"},
		"gpt-5.1": {"shell_command", "apply_patch", "update_plan", "view_image"}, "gpt-5.2": {"shell_command", "apply_patch", "update_plan", "view_image"},
		"gpt-5": {"shell", "update_plan", "view_image"}, "o3": {"shell", "update_plan", "view_image"}, "o4-mini": {"shell", "update_plan", "view_image"},
		"codex-mini-latest": {"local_shell", "update_plan", "view_image"}, "gpt-oss-120b": {"shell", "apply_patch", "update_plan", "view_image"},
	} {
		theirs := recordedCodexTools(t, model)
		ours := map[string]ToolDef{}
		for _, d := range familyDefs(t, model) {
			ours[d.Name] = d
		}
		for _, name := range trained {
			d, ok := ours[name]
			if !ok {
				t.Errorf("%s is not offered %s, which codex offers it", model, name)
				continue
			}
			tool := theirs[name]
			if tool == nil {
				t.Errorf("%s: codex's recording has no %s", model, name)
				continue
			}
			switch tool["type"] {
			case "custom":
				f, _ := json.Marshal(tool["format"])
				var want conversation.ToolFormat
				_ = json.Unmarshal(f, &want)
				if d.Format == nil || *d.Format != want {
					t.Errorf("%s's %s is not codex's freeform tool with its grammar: %+v", model, name, d.Format)
				}
			case "local_shell":
				if d.Builtin != "local_shell" {
					t.Errorf("%s's %s is not the built-in local_shell: %+v", model, name, d)
				}
			default:
				compareSchema(t, model+"'s "+name, d.Parameters, tool["parameters"])
			}
		}
		for _, d := range ours {
			if _, ok := theirs[d.Name]; !ok && !slices.Contains(ralphsOwn, d.Name) {
				t.Errorf("%s is offered %s, which is neither codex's nor one of ralph's own tools codex has none of", model, d.Name)
			}
		}
	}
}

// ralphsOwn are the tools of ralph's any family is offered under ralph's
// names: no family has a tool of its own for them.
var ralphsOwn = []string{ToolRemember, ToolCompleteTask, ToolRecordDecision, ToolAskUser, ToolSkill, ToolSpawnAgent,
	ToolReportFindings, ToolJudgeFindings, ToolFixesDone, ToolWebFetch, ToolWritePlan, ToolDiagnostics}

// compareSchema checks ours (a JSON schema) against theirs (decoded):
// every property of ours is theirs with the same type, and the required
// lists are the same.
func compareSchema(t *testing.T, what string, ours json.RawMessage, theirs any) {
	t.Helper()
	type schema struct {
		Properties map[string]struct {
			Type  string `json:"type"`
			Items *struct {
				Type string `json:"type"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	var o, th schema
	if err := json.Unmarshal(ours, &o); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b, _ := json.Marshal(theirs)
	if err := json.Unmarshal(b, &th); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for name, p := range o.Properties {
		q, ok := th.Properties[name]
		if !ok {
			t.Errorf("%s has the property %s, which the trained tool has not", what, name)
			continue
		}
		numeric := func(s string) bool { return s == "number" || s == "integer" }
		if p.Type != q.Type && !(numeric(p.Type) && numeric(q.Type)) {
			t.Errorf("%s's %s is a %s, the trained tool's a %s", what, name, p.Type, q.Type)
		}
		if (p.Items == nil) != (q.Items == nil) || p.Items != nil && p.Items.Type != q.Items.Type {
			t.Errorf("%s's %s has items %+v, the trained tool's %+v", what, name, p.Items, q.Items)
		}
	}
	sort.Strings(o.Required)
	sort.Strings(th.Required)
	if !slices.Equal(o.Required, th.Required) {
		t.Errorf("%s requires %v, the trained tool %v", what, o.Required, th.Required)
	}
}

// TestClaudeFamilyIsClaudeCodesTools compares the Claude family's tools
// with the tools claude 2.1.197 sends (testdata/claude-code-tools): the
// same names, and each property ralph offers is Claude Code's with its
// type. Glob, Grep and TodoWrite, which that version no longer sends,
// are checked against the SDK's published types by the end-to-end test
// (e2e TestClaudeFamilyMatchesTheSDKTypes).
func TestClaudeFamilyIsClaudeCodesTools(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "claude-code-tools", "claude-sonnet-4-5.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	theirs := map[string]map[string]any{}
	for _, tool := range rec.Tools {
		theirs[tool.Name] = tool.InputSchema
	}
	// Claude Code calls Task "Agent" since 2.0; Sonnet 4.5 was trained on
	// Task, and both names are accepted.
	theirs["Task"] = theirs["Agent"]
	checked := 0
	for _, d := range familyDefs(t, "claude-sonnet-4-5") {
		schema, ok := theirs[d.Name]
		switch {
		case ok:
			checked++
			if d.Name == "Task" || d.Name == "TaskOutput" {
				// Claude Code's Agent requires only description and prompt
				// in the SDK's types, its TaskOutput block and timeout with
				// defaults: ralph requires what the SDK's types require.
				compareProperties(t, "Claude's "+d.Name, d.Parameters, schema)
				continue
			}
			compareSchema(t, "Claude's "+d.Name, d.Parameters, schema)
		case slices.Contains([]string{"Glob", "Grep", "TodoWrite"}, d.Name), slices.Contains(ralphsOwn, d.Name):
		default:
			t.Errorf("Claude is offered %s, which is neither Claude Code's nor one of ralph's own", d.Name)
		}
	}
	if checked < 8 {
		t.Errorf("only %d of the Claude family's tools were compared with Claude Code's", checked)
	}
}

// compareProperties is compareSchema without the required lists.
func compareProperties(t *testing.T, what string, ours json.RawMessage, theirs map[string]any) {
	t.Helper()
	th := map[string]any{}
	for k, v := range theirs {
		th[k] = v
	}
	var o struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(ours, &o)
	th["required"] = o.Required
	compareSchema(t, what, ours, th)
}

// TestEveryTrainedNameIsAcceptedFromAnyModel: a model calling a tool
// under any family's name gets ralph's tool, with ralph's arguments,
// whatever its own family; ralph's own names and unknown names pass as
// they are.
func TestEveryTrainedNameIsAcceptedFromAnyModel(t *testing.T) {
	t.Parallel()
	f := &Faces{}
	cases := []struct{ name, args, tool, want string }{
		{"Bash", `{"command":"ls -la","timeout":5000,"run_in_background":false,"description":"List"}`, ToolRunCommand, `{"command":"ls -la","timeout_s":5}`},
		{"bash", `{"command":"ls","dangerouslyDisableSandbox":true}`, ToolRunCommand, `{"command":"ls","unsandboxed":true}`},
		{"shell_command", `{"command":"go test ./...","workdir":"pkg","timeout_ms":60000}`, ToolRunCommand, `{"command":"go test ./...","timeout_s":60,"workdir":"pkg"}`},
		{"shell_command", `{"command":"rm -rf build","sandbox_permissions":"require_escalated","justification":"x"}`, ToolRunCommand, `{"command":"rm -rf build","unsandboxed":true}`},
		{"shell", `{"command":["bash","-lc","ls | wc -l"]}`, ToolRunCommand, `{"command":"ls | wc -l"}`},
		{"shell", `{"command":["rg","-n","a b","src"],"workdir":"."}`, ToolRunCommand, `{"command":"rg -n 'a b' src"}`},
		{"shell", `{"command":["echo","$HOME","it's"]}`, ToolRunCommand, `{"command":"echo '$HOME' \"it's\""}`},
		{"shell", `{"command":["apply_patch","*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"]}`, ToolApplyPatch,
			`{"input":"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"}`},
		{"shell", `{"command":["apply_patch","*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"],"workdir":"sub"}`, ToolApplyPatch,
			`{"input":"*** Begin Patch\n*** Add File: sub/a.txt\n+hi\n*** End Patch\n"}`},
		{"shell", `{"command":["bash","-lc","apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: b.go\n@@\n-x\n+y\n*** End Patch\nEOF\n"]}`, ToolApplyPatch,
			`{"input":"*** Begin Patch\n*** Update File: b.go\n@@\n-x\n+y\n*** End Patch\n"}`},
		{"shell", `{"command":["bash","-lc","cd src && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: old.go\n*** End Patch\nEOF"]}`, ToolApplyPatch,
			`{"input":"*** Begin Patch\n*** Delete File: src/old.go\n*** End Patch\n"}`},
		{"shell", `{"command":["bash","-lc","apply_patch <<EOF\n$(cat x)\nEOF"]}`, ToolRunCommand, `{"command":"apply_patch <<EOF\n$(cat x)\nEOF"}`},
		{"local_shell", `{"type":"exec","command":["bash","-lc","echo hi > b.txt"],"timeout_ms":10000,"working_directory":null,"env":{},"user":null}`,
			ToolRunCommand, `{"command":"echo hi > b.txt","timeout_s":10}`},
		{"local_shell", `{"type":"exec","command":["apply_patch","*** Begin Patch\n*** Add File: c.txt\n+yo\n*** End Patch\n"]}`, ToolApplyPatch,
			`{"input":"*** Begin Patch\n*** Add File: c.txt\n+yo\n*** End Patch\n"}`},
		{"apply_patch", `{"input":"*** Begin Patch\n*** End Patch"}`, ToolApplyPatch, `{"input":"*** Begin Patch\n*** End Patch"}`},
		{"view_image", `{"path":"shot.png"}`, ToolReadFile, `{"path":"shot.png"}`},
		{"Read", `{"file_path":"/p/a.go","offset":10,"limit":5}`, ToolReadFile, `{"limit":5,"offset":10,"path":"/p/a.go"}`},
		{"Write", `{"file_path":"a.go","content":"x"}`, ToolWriteFile, `{"content":"x","path":"a.go"}`},
		{"Edit", `{"file_path":"a.go","old_string":"x","new_string":"y","replace_all":true}`, ToolEditFile, `{"new_string":"y","old_string":"x","path":"a.go","replace_all":true}`},
		{"MultiEdit", `{"file_path":"a.go","edits":[{"old_string":"x","new_string":"y"}]}`, ToolEditFile, `{"edits":[{"old_string":"x","new_string":"y"}],"path":"a.go"}`},
		{"Glob", `{"pattern":"**/*.go"}`, ToolListFiles, `{"pattern":"**/*.go"}`},
		{"Grep", `{"pattern":"x","-i":true,"output_mode":"content","-C":2,"glob":"*.go"}`, ToolSearch, `{"pattern":"x","ignore_case":true,"output":"lines","context":2,"glob":"*.go"}`},
		{"Grep", `{"pattern":"TODO"}`, ToolSearch, `{"pattern":"TODO","output":"files"}`},
		{"TodoWrite", `{"todos":[{"content":"Fix it","status":"in_progress","activeForm":"Fixing it"}]}`, ToolUpdatePlan, `{"plan":[{"step":"Fix it","status":"in_progress"}]}`},
		{"update_plan", `{"plan":[{"step":"a","status":"pending"}]}`, ToolUpdatePlan, `{"plan":[{"step":"a","status":"pending"}]}`},
		{"Task", `{"description":"Find uses","prompt":"Find every use of X","subagent_type":"general-purpose"}`, ToolSpawnAgent, `{"task":"Find every use of X"}`},
		{"Agent", `{"description":"Review","prompt":"Review a.go","subagent_type":"reviewer"}`, ToolSpawnAgent, `{"agent":"reviewer","task":"Review a.go"}`},
		{"TaskOutput", `{"task_id":"bg_1","block":true,"timeout":5000}`, ToolCommandOutput, `{"id":"bg_1","wait_s":5}`},
		{"BashOutput", `{"bash_id":"bg_1","block":false}`, ToolCommandOutput, `{"id":"bg_1"}`},
		{"KillShell", `{"shell_id":"bg_2"}`, ToolStopCommand, `{"id":"bg_2"}`},
		{"WebFetch", `{"url":"https://example.com","prompt":"title"}`, ToolWebFetch, `{"prompt":"title","url":"https://example.com"}`},
		{"run_command", `{"command":"ls"}`, ToolRunCommand, `{"command":"ls"}`},
		{"mcp__fs__read", `{"x":1}`, "mcp__fs__read", `{"x":1}`},
	}
	for _, model := range familyModel {
		for _, c := range cases {
			got := f.Canonical(model, conversation.ToolCall{ID: "call_1", Name: c.name, Arguments: c.args})
			if got.Name != c.tool || got.ID != "call_1" || !sameJSON(got.Arguments, c.want) {
				t.Errorf("%s calling %s %s: got %s %s, want %s %s", model, c.name, c.args, got.Name, got.Arguments, c.tool, c.want)
			}
		}
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(x, y)
}

// TestABadInputKeepsItsName: input that cannot be mapped comes back under
// ralph's name of the tool, as it was, for the tool to say what is wrong.
func TestABadInputKeepsItsName(t *testing.T) {
	t.Parallel()
	f := &Faces{}
	for _, c := range []struct{ name, args, tool string }{
		{"shell", `{"command":42}`, ToolRunCommand}, {"Bash", `not json`, ToolRunCommand}, {"shell", `{"command":[]}`, ToolRunCommand},
	} {
		got := f.Canonical("gpt-5", conversation.ToolCall{ID: "x", Name: c.name, Arguments: c.args})
		if got.Name != c.tool || got.Arguments != c.args {
			t.Errorf("%s %s: got %s %s", c.name, c.args, got.Name, got.Arguments)
		}
	}
}

// TestTheConversationIsOfferedInTheModelsTerms: a session's calls,
// recorded under ralph's names, are shown to each family under its own,
// their results named alike, and come back as they were; the records
// themselves are not changed, and the same conversation is the same
// bytes each time (the endpoint caches the prefix).
func TestTheConversationIsOfferedInTheModelsTerms(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Options: workers.Options{Sandbox: sandbox.FullAccess}})
	defs := ts.Definitions()
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "sys"},
		{Role: conversation.RoleUser, Content: "do it"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
			{ID: "c1", Name: ToolRunCommand, Arguments: `{"command":"go test ./...","timeout_s":60}`},
			{ID: "c2", Name: ToolApplyPatch, Arguments: `{"input":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"}`},
			{ID: "c3", Name: ToolRemember, Arguments: `{"note":"n"}`},
		}},
		{Role: conversation.RoleTool, ToolCallID: "c1", Name: ToolRunCommand, Content: "ok"},
		{Role: conversation.RoleTool, ToolCallID: "c2", Name: ToolApplyPatch, Content: "done"},
		{Role: conversation.RoleTool, ToolCallID: "c3", Name: ToolRemember, Content: "kept"},
	}
	before, _ := json.Marshal(msgs)
	want := map[string][3]string{
		"gpt-4o-mini":       {ToolRunCommand, ToolApplyPatch, ToolRemember},
		"claude-sonnet-4-5": {"Bash", ToolApplyPatch, ToolRemember},
		"gpt-5-codex":       {"shell_command", "apply_patch", ToolRemember},
		"gpt-5":             {"shell", "shell", ToolRemember},
		"codex-mini-latest": {"local_shell", "local_shell", ToolRemember},
		"gpt-oss-120b":      {"shell", "apply_patch", ToolRemember},
	}
	for model, names := range want {
		_, shown := ts.Offer(model, defs, msgs)
		again, _ := json.Marshal(func() []conversation.Message { _, m := ts.Offer(model, defs, msgs); return m }())
		first, _ := json.Marshal(shown)
		if string(first) != string(again) {
			t.Errorf("%s: the same conversation is offered as different bytes", model)
		}
		for i, call := range shown[2].ToolCalls {
			if call.Name != names[i] {
				t.Errorf("%s: call %d shown as %s, want %s", model, i, call.Name, names[i])
			}
			if shown[3+i].Name != names[i] {
				t.Errorf("%s: result %d named %s, want %s", model, i, shown[3+i].Name, names[i])
			}
			back := ts.Canonical(model, call)
			if back.Name != msgs[2].ToolCalls[i].Name || !sameJSON(back.Arguments, msgs[2].ToolCalls[i].Arguments) {
				t.Errorf("%s: %s %s comes back as %s %s", model, call.Name, call.Arguments, back.Name, back.Arguments)
			}
		}
	}
	if after, _ := json.Marshal(msgs); string(after) != string(before) {
		t.Error("offering the conversation changed the conversation itself")
	}
}

// TestCoveredToolsFollowTheirCover: codex's models read and search with
// their shell, so where no command tool is offered (a reviewer) they are
// offered ralph's own file tools, under ralph's names.
func TestCoveredToolsFollowTheirCover(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Options: workers.Options{Sandbox: sandbox.FullAccess}})
	reviewer := ts.For(RoleReviewer).Definitions()
	for _, model := range []string{"gpt-5-codex", "gpt-5", "codex-mini-latest"} {
		defs, _ := ts.Offer(model, reviewer, nil)
		var names []string
		for _, d := range defs {
			names = append(names, d.Name)
		}
		for _, want := range []string{ToolReadFile, ToolListFiles, ToolSearch} {
			if !slices.Contains(names, want) {
				t.Errorf("a %s reviewer is offered %v, without %s", model, names, want)
			}
		}
		main, _ := ts.Offer(model, ts.Definitions(), nil)
		for _, d := range main {
			if slices.Contains([]string{ToolReadFile, ToolListFiles, ToolSearch, ToolWriteFile, ToolEditFile}, d.Name) {
				t.Errorf("%s is offered %s beside its shell", model, d.Name)
			}
		}
	}
}

// TestTheSandboxSentenceFollowsEveryFace: run_command's description ends
// with what this session's sandbox allows, and so does each family's
// command tool.
func TestTheSandboxSentenceFollowsEveryFace(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{})
	for _, model := range familyModel {
		defs, _ := ts.Offer(model, ts.Definitions(), nil)
		found := false
		for _, d := range defs {
			if strings.Contains(d.Description, "Commands run in a sandbox (workspace-write)") {
				found = true
			}
		}
		if !found && model != "codex-mini-latest" {
			t.Errorf("%s's command tool does not say what the sandbox allows", model)
		}
	}
}

// TestAnArgvRunsAsItWasSent: the command line an argv becomes (which the
// approval question shows and bash runs) runs that argv, word for word,
// whatever the words hold: quotes, $, backquotes, globs, newlines, tabs,
// semicolons, empty words. bash itself says what it ran.
func TestAnArgvRunsAsItWasSent(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to show what a command line runs")
	}
	for _, argv := range [][]string{
		{"a b", "$HOME", "`id`", "*.go", "it's", `"q"`, "x;y", "a\nb", "a\n\tb", "", "~", "-n", "a\\b", "$(rm -rf /)", "\t", "!x"},
		{"-n", "func (t \\*Toolset)", "--glob", "!vendor/**"},
		{"%s\n", "ünïcödé", "€", "\x1b[31mred"},
	} {
		line := joinArgv(append([]string{"printf", "%s\\0"}, argv...))
		out, err := exec.Command(bash, "-c", line).Output()
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !slices.Equal(got, argv) {
			t.Errorf("%q ran %q, want %q", line, got, argv)
		}
	}
}
