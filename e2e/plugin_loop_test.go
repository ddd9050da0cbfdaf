package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/fixtures"
)

// The hook input of issue 69: transcript_path names a JSONL transcript in
// Claude Code's line format, permission_mode is sent, tool_response has
// Claude Code's shapes, and a Stop hook that blocks keeps the model going
// with no cap of ralph's own. Ground truth is what the real Claude Code
// sent its hooks (testdata/claude-code-transcript, made with the real
// claude 2.1.197 against the stand-in model: its README says how).

// TestLoopPluginRunsToItsIterationLimit: the public angry-ralph plugin
// (MIT; its Stop hook parses the JSONL transcript for the last assistant
// message and looks for the completion promise in it), added with ralph
// plugin add, keeps the model working on its section until its own TDD
// iteration cap, then lets it stop. With ralph's markdown transcript the
// hook could not parse the transcript and blocked with "Transcript
// parsing failed" without counting, until ralph's own cap of 3 cut it.
func TestLoopPluginRunsToItsIterationLimit(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	state := filepath.Join(proj, ".ralph-state")
	mustWrite(t, filepath.Join(state, "loop.md"), "---\nactive: true\nphase: execute\niteration: 0\nmax_iterations: 10\n"+
		"current_section: section-1\ncompletion_promise: SECTION_DONE\n---\n\nMake the tests of section one pass.\n")
	mustWrite(t, filepath.Join(state, "pipeline.json"), `{"max_tdd_iterations": 4}`)
	answers := 0
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		answers++
		return llmtest.Response{Text: fmt.Sprintf("Answer %d: the tests still fail.", answers)}
	})
	t.Cleanup(srv.Close)
	env := realPython(t, attackEnv(t, home, srv.URL, nil))
	// The person's copy, outside every project (the fixtures may lie in
	// a git work tree, where a plugin is the model's).
	plugin := filepath.Join(filepath.Dir(home), "plugins", "angry-ralph")
	copyTree(t, fixtures.Path(t, "public-plugins", "Custos-angry-ralph"), plugin)
	if r := ralph(t, proj, env, nil, "plugin", "add", plugin); r.code != 0 {
		t.Fatalf("ralph plugin add exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := ralph(t, proj, env, nil, "-y", "work on section one")
	if r.code != 0 {
		t.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(state, "loop.md")); !strings.Contains(got, "\niteration: 4\n") {
		t.Fatalf("the loop's state after the run:\n%s\nwant iteration 4 (the plugin's cap)\nstderr:\n%s", got, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want the first and 4 the loop kept going\nstderr:\n%s", len(reqs), r.stderr)
	}
	msgs := reqs[len(reqs)-1].Request.Messages
	if last := msgs[len(msgs)-1]; last.Role != "user" || !strings.Contains(last.Content, "Make the tests of section one pass.") {
		t.Fatalf("the last prompt the loop sent: %+v\nwant the section's prompt from the plugin's state file", last)
	}
	if strings.Contains(r.stderr, "Transcript parsing failed") || strings.Contains(r.stderr, "lets it stop now") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
}

// TestHookInputIsClaudeCodes: a logging hook of the person's
// (~/.claude/settings.json) on PostToolUse and Stop gets what the real
// Claude Code sends: tool_response with the fields of Claude Code's for
// Bash, Write (create and update), Edit and Read, permission_mode, and a
// transcript_path whose JSONL, read at Stop, holds the conversation in
// Claude Code's line format with the answer that made Stop fire last.
func TestHookInputIsClaudeCodes(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	hook := `d="$CLAUDE_PROJECT_DIR/rec"; mkdir -p "$d"; f="$d/$(date +%s%N).json"; cat > "$f"; ` +
		`if [ "$(jq -r .hook_event_name "$f")" = Stop ]; then cp "$(jq -r .transcript_path "$f")" "$d/transcript-at-stop.jsonl"; fi`
	cmd, _ := json.Marshal(hook)
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"), fmt.Sprintf(`{"hooks":{
 "PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":%s}]}],
 "Stop":[{"hooks":[{"type":"command","command":%s}]}]}}`, cmd, cmd))
	srv := inlineServer(t, toolScenario(t, "hook-input", [][]toolCall{
		{{"write_file", `{"path":"notes.txt","content":"one\ntwo\nthree\n"}`}},
		{{"edit_file", `{"path":"notes.txt","old_string":"two","new_string":"TWO"}`}},
		{{"read_file", `{"path":"notes.txt"}`}},
		{{"run_command", `{"command":"echo out"}`}},
		{{"write_file", `{"path":"notes.txt","content":"rewritten\n"}`}},
	}, "All done: the notes are rewritten."))
	env := attackEnv(t, home, srv.URL, nil)
	r := ralph(t, proj, env, nil, "-y", "write the notes")
	if r.code != 0 {
		t.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var got []map[string]any
	files, _ := filepath.Glob(filepath.Join(proj, "rec", "*.json"))
	sort.Strings(files)
	for _, f := range files {
		var m map[string]any
		if err := json.Unmarshal([]byte(readFileT(t, f)), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	want := hookJSONLines(t, testdata("claude-code-transcript", "hook-inputs.jsonl"))
	shapes := func(ins []map[string]any) []string {
		var out []string
		for _, in := range ins {
			if in["hook_event_name"] != "PostToolUse" {
				continue
			}
			resp, _ := in["tool_response"].(map[string]any)
			shape := fmt.Sprintf("%v %v", in["tool_name"], hookKeys(resp))
			if f, ok := resp["file"].(map[string]any); ok {
				shape += fmt.Sprintf(" file%v", hookKeys(f))
			}
			out = append(out, fmt.Sprintf("%s type=%v", shape, resp["type"]))
		}
		return out
	}
	if g, w := shapes(got), shapes(want); !slices.Equal(g, w) {
		t.Errorf("tool_response shapes:\n%s\nwant Claude Code's:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	for _, in := range got {
		if in["permission_mode"] != "bypassPermissions" {
			t.Errorf("%v's permission_mode %v, want bypassPermissions (-y)", in["hook_event_name"], in["permission_mode"])
		}
		resp, _ := in["tool_response"].(map[string]any)
		if in["tool_name"] == "Edit" && (resp["originalFile"] != "one\ntwo\nthree\n" || fmt.Sprint(resp["structuredPatch"]) != fmt.Sprint(hookJSONValue(t, `[{"oldStart":1,"oldLines":3,"newStart":1,"newLines":3,"lines":[" one","-two","+TWO"," three"]}]`))) {
			t.Errorf("Edit's tool_response %v", resp)
		}
		if in["tool_name"] == "Bash" && resp["stdout"] != "out\n" && resp["stdout"] != "out" {
			t.Errorf("Bash's tool_response %v", resp)
		}
	}
	stop := got[len(got)-1]
	if stop["hook_event_name"] != "Stop" || stop["last_assistant_message"] != "All done: the notes are rewritten." ||
		!strings.HasSuffix(fmt.Sprint(stop["transcript_path"]), "transcript.jsonl") {
		t.Fatalf("the Stop input %v", stop)
	}
	lines := hookJSONLines(t, filepath.Join(proj, "rec", "transcript-at-stop.jsonl"))
	var kinds []string
	for i, l := range lines {
		for _, k := range []string{"type", "message", "uuid", "parentUuid", "sessionId", "timestamp", "cwd"} {
			if _, ok := l[k]; !ok {
				t.Errorf("transcript line %d has no %s: %v", i+1, k, l)
			}
		}
		if i > 0 && l["parentUuid"] != lines[i-1]["uuid"] {
			t.Errorf("transcript line %d's parentUuid is not the line before's uuid", i+1)
		}
		msg, _ := l["message"].(map[string]any)
		kind := fmt.Sprintf("%v/%v", l["type"], msg["role"])
		if blocks, ok := msg["content"].([]any); ok {
			for _, b := range blocks {
				kind += fmt.Sprintf(":%v", b.(map[string]any)["type"])
			}
		}
		kinds = append(kinds, kind)
	}
	wantKinds := []string{"user/user"}
	for range 5 {
		wantKinds = append(wantKinds, "assistant/assistant:tool_use", "user/user:tool_result")
	}
	wantKinds = append(wantKinds, "assistant/assistant:text")
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("transcript lines %v\nwant %v", kinds, wantKinds)
	}
	// The loop plugins' own reading of the last assistant message.
	var last map[string]any
	for _, l := range lines {
		if l["type"] == "assistant" {
			last = l
		}
	}
	if text := last["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "All done: the notes are rewritten." {
		t.Fatalf("the last assistant text in the transcript: %v", text)
	}
}

// hookJSONLines reads a JSONL file.
func hookJSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// hookJSONValue is s decoded.
func hookJSONValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// hookKeys are m's keys, sorted.
func hookKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// realPython puts the directory of the python3 that python3 runs first on
// env's PATH: the plugin's hook starts python3 five times an iteration
// within its own 30-second timeout, and a version manager's shim (pyenv's
// is a shell script that starts more programs) costs seconds of that on a
// loaded machine.
func realPython(t *testing.T, env []string) []string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3, which the plugin's hook runs: %v", err)
	}
	dir := filepath.Dir(strings.TrimSpace(string(out)))
	for i, e := range env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + p
		}
	}
	return env
}
