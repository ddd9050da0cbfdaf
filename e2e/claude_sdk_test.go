//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The tests of the claude shape (issue 92, item 14) from the side of a
// program nobody here wrote: Claude Code's Agent SDK from npm
// (@anthropic-ai/claude-agent-sdk, installed by e2e/setup.sh) runs ralph
// as its Claude Code executable through e2e/testdata/claudesdk/query.mjs.
// The SDK gives ralph the flags it gives claude (--output-format
// stream-json --verbose --input-format stream-json), the prompt as a
// stream-json user message on standard input, and `--stream-shape
// claude` through its own extraArgs option; it parses ralph's output
// with its own reader. The model is the stand-in.

// sdkPlan is what query.mjs does (it says each field).
type sdkPlan struct {
	Executable string            `json:"executable"`
	Cwd        string            `json:"cwd"`
	Env        map[string]string `json:"env"`
	Prompt     string            `json:"prompt,omitempty"`
	Prompts    []string          `json:"prompts,omitempty"`
	Options    map[string]any    `json:"options"`
}

// sdkLog is what query() yielded, what ralph said on stderr and the
// error query() threw.
type sdkLog struct {
	Messages []map[string]any `json:"messages"`
	Stderr   string           `json:"stderr"`
	Error    *string          `json:"error"`
}

// claudeSDK runs query.mjs with plan against ralph in dir.
func claudeSDK(t *testing.T, dir string, env []string, plan sdkPlan) sdkLog {
	t.Helper()
	node := needTool(t, "node", "Node.js")
	nm := filepath.Join(filepath.Dir(testCacheBin()), "lib", "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "@anthropic-ai", "claude-agent-sdk", "package.json")); err != nil {
		t.Fatalf("Claude Code's Agent SDK (npm's @anthropic-ai/claude-agent-sdk) is not installed, and this test needs it: %s installs it", setupCommand)
	}
	// The script runs beside a link to the library's node_modules, where
	// node's ESM resolution (which ignores NODE_PATH) looks.
	work := t.TempDir()
	src, err := os.ReadFile(filepath.Join(moduleRoot, "e2e", "testdata", "claudesdk", "query.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(work, "query.mjs"), string(src))
	if err := os.Symlink(nm, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	plan.Executable, plan.Cwd, plan.Env = ralphBin, dir, map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		plan.Env[k] = v
	}
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(work, "plan.json"), string(b))
	cmd := exec.Command(node, filepath.Join(work, "query.mjs"), filepath.Join(work, "plan.json"), filepath.Join(work, "log.json"))
	cmd.Dir = work
	cmd.Env = cleanEnv(t)
	out, err := runLimited(t, cmd, ralphRunLimit)
	lb, lerr := os.ReadFile(filepath.Join(work, "log.json"))
	if err != nil || lerr != nil {
		t.Fatalf("query.mjs failed: %v %v\n%s", err, lerr, out)
	}
	var l sdkLog
	if err := json.Unmarshal(lb, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// sdkMessages are the messages of l of type typ.
func (l sdkLog) of(typ string) []map[string]any {
	var out []map[string]any
	for _, m := range l.Messages {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// sdkBlock is the first content block of an assistant or user message.
func sdkBlock(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	msg, _ := m["message"].(map[string]any)
	content, _ := msg["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("message without content: %v", m)
	}
	b, _ := content[0].(map[string]any)
	return b
}

// TestClaudeAgentSDKRunsRalphAsClaudeCode: query() with ralph as the
// executable yields the system init, the model's text, its tool_use (of
// write_file, under Claude Code's name Write) and the tool_result that
// answers it, and the result, each with the fields the SDK's types
// promise; the tool really ran. ralph before issue 92
// knew no --input-format, so the SDK got no message at all.
func TestClaudeAgentSDKRunsRalphAsClaudeCode(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		if r.Index == 0 {
			return llmtest.Response{Text: "Writing the file.", ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: `{"path":"hello.txt","content":"hi from ralph\n"}`}}}
		}
		return llmtest.Response{Text: "Wrote hello.txt."}
	})
	dir := t.TempDir()
	l := claudeSDK(t, dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), sdkPlan{Prompt: "write hello.txt",
		Options: map[string]any{"extraArgs": map[string]any{"stream-shape": "claude"}}})
	if l.Error != nil {
		t.Fatalf("query() threw: %s\nralph's stderr:\n%s", *l.Error, l.Stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "hello.txt")); got != "hi from ralph\n" {
		t.Errorf("hello.txt = %q", got)
	}
	if len(l.Messages) == 0 || l.Messages[0]["type"] != "system" || l.Messages[0]["subtype"] != "init" {
		t.Fatalf("the first message is not the system init: %v", l.Messages)
	}
	init := l.Messages[0]
	session, _ := init["session_id"].(string)
	tools, _ := init["tools"].([]any)
	if session == "" || init["cwd"] == "" || init["model"] == "" || !sdkHas(tools, "Write") || !sdkHas(tools, "Bash") {
		t.Errorf("init = %v", init)
	}
	var text, use map[string]any
	for _, m := range l.of("assistant") {
		switch b := sdkBlock(t, m); b["type"] {
		case "text":
			if text == nil {
				text = b
			}
		case "tool_use":
			use = b
		}
		if m["session_id"] != session || m["parent_tool_use_id"] != nil {
			t.Errorf("assistant message of another session or agent: %v", m)
		}
	}
	if text == nil || text["text"] != "Writing the file." {
		t.Errorf("no text block with the model's words: %v", l.of("assistant"))
	}
	input, _ := use["input"].(map[string]any)
	if use == nil || use["name"] != "Write" || use["id"] == "" || input["file_path"] != filepath.Join(dir, "hello.txt") {
		t.Fatalf("no tool_use of Write (ralph's write_file) with its absolute file_path: %v", l.of("assistant"))
	}
	users := l.of("user")
	if len(users) != 1 {
		t.Fatalf("user messages = %v, want the one tool_result", users)
	}
	res := sdkBlock(t, users[0])
	if res["type"] != "tool_result" || res["tool_use_id"] != use["id"] || res["is_error"] != false {
		t.Errorf("tool_result = %v, want the answer to %v", res, use["id"])
	}
	results := l.of("result")
	if len(results) != 1 || l.Messages[len(l.Messages)-1]["type"] != "result" {
		t.Fatalf("results = %v, want one, last", results)
	}
	r := results[0]
	if r["subtype"] != "success" || r["is_error"] != false || r["result"] != "Wrote hello.txt." || r["session_id"] != session || r["num_turns"] != float64(2) {
		t.Errorf("result = %v", r)
	}
	if _, ok := r["usage"].(map[string]any); !ok {
		t.Errorf("result without usage: %v", r)
	}
	if _, ok := r["total_cost_usd"].(float64); !ok {
		t.Errorf("result without total_cost_usd: %v", r)
	}
}

// TestClaudeAgentSDKStreamsOneTurnPerMessage: query() given a stream of
// user messages gets one result for each, the second turn answering in
// the same conversation; and a run that reaches maxTurns is the SDK's
// error_max_turns, with its errors.
func TestClaudeAgentSDKStreamsOneTurnPerMessage(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		if r.Index == 0 {
			return llmtest.Response{Text: "The first answer."}
		}
		var said []string
		for _, m := range r.Request.Messages {
			said = append(said, m.Content)
		}
		if !strings.Contains(strings.Join(said, "\n"), "The first answer.") {
			return llmtest.Response{Text: "I do not remember the first message."}
		}
		return llmtest.Response{Text: "The second answer."}
	})
	dir := t.TempDir()
	l := claudeSDK(t, dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), sdkPlan{Prompts: []string{"first", "second"},
		Options: map[string]any{"extraArgs": map[string]any{"stream-shape": "claude"}}})
	if l.Error != nil {
		t.Fatalf("query() threw: %s\nralph's stderr:\n%s", *l.Error, l.Stderr)
	}
	results := l.of("result")
	if len(results) != 2 || results[0]["result"] != "The first answer." || results[1]["result"] != "The second answer." {
		t.Fatalf("results = %v\nralph's stderr:\n%s", results, l.Stderr)
	}
	if results[0]["session_id"] != results[1]["session_id"] {
		t.Errorf("the second turn is in another session: %v", results)
	}

	loop := answering(t, func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "looking", ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: `{}`}}}
	})
	l = claudeSDK(t, t.TempDir(), cleanEnv(t, "OPENAI_BASE_URL="+loop.URL), sdkPlan{Prompt: "look around",
		Options: map[string]any{"maxTurns": 1, "extraArgs": map[string]any{"stream-shape": "claude"}}})
	results = l.of("result")
	if len(results) != 1 {
		t.Fatalf("results = %v\nerror %v\nralph's stderr:\n%s", results, l.Error, l.Stderr)
	}
	errs, _ := results[0]["errors"].([]any)
	if results[0]["subtype"] != "error_max_turns" || results[0]["is_error"] != true || len(errs) == 0 {
		t.Errorf("result = %v, want error_max_turns with its errors", results[0])
	}

	// An option with no meaning in ralph is refused before anything
	// runs, in one sentence naming it.
	l = claudeSDK(t, t.TempDir(), cleanEnv(t, "OPENAI_BASE_URL="+loop.URL), sdkPlan{Prompt: "look around",
		Options: map[string]any{"includePartialMessages": true, "extraArgs": map[string]any{"stream-shape": "claude"}}})
	const refusal = "ralph: --include-partial-messages is Claude Code's (the Agent SDK's includePartialMessages option), which ralph does not take"
	if l.Error == nil || !strings.Contains(l.Stderr, refusal) {
		t.Errorf("includePartialMessages: error %v, messages %v, stderr:\n%s", l.Error, l.Messages, l.Stderr)
	}
	// The refusal is also claude's error result line, the one line the
	// SDK reads (docs/oneshot.md promises the result for every error):
	// never ralph's own init line.
	for i, m := range l.Messages {
		_, ralphs := m["schema_version"]
		last := i == len(l.Messages)-1
		if ralphs || !last && m["type"] != "system" || last && (m["type"] != "result" || m["is_error"] != true) {
			t.Errorf("includePartialMessages: messages %v, want at most claude's init and error result", l.Messages)
			break
		}
	}
	if n := len(loop.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once (the max-turns run's)", n)
	}
}

// sdkHas says whether list holds s.
func sdkHas(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestClaudeShapeReadByAJqFilter: the filters people wrote for `claude
// -p --output-format stream-json --verbose` read ralph's --stream-shape
// claude unchanged: the model's words, the Bash commands it ran, and the
// result's text, each by Claude Code's own path; the same run in ralph's
// own shape is the event contract as before, no line of Claude Code's.
func TestClaudeShapeReadByAJqFilter(t *testing.T) {
	t.Parallel()
	jq := needTool(t, "jq", "jq")
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		if r.Index%2 == 0 {
			return llmtest.Response{Text: "Listing.", ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: `{"command":"ls"}`}}}
		}
		return llmtest.Response{Text: "One file."}
	})
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "a.txt"), "a\n")
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-p", "-y", "--output-format", "stream-json", "--stream-shape", "claude", "list the files")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	filter := func(expr string) string {
		cmd := exec.Command(jq, "-r", expr)
		cmd.Stdin = strings.NewReader(r.stdout)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("jq %s: %v\n%s", expr, err, r.stdout)
		}
		return strings.TrimSpace(string(out))
	}
	for expr, want := range map[string]string{
		`select(.type == "system" and .subtype == "init") | .cwd`:                                      dir,
		`select(.type == "assistant") | .message.content[] | select(.type == "text") | .text`:          "Listing.\nOne file.",
		`select(.type == "assistant") | .message.content[] | select(.name == "Bash") | .input.command`: "ls",
		`select(.type == "user") | .message.content[] | select(.type == "tool_result") | .content`:     "a.txt",
		`select(.type == "result") | "\(.subtype) \(.is_error) \(.num_turns) \(.result)"`:              "success false 2 One file.",
		// No line of Claude Code's carries ralph's schema_version.
		`select(.schema_version != null) | .type`: "",
	} {
		if got := filter(expr); !strings.Contains(got, want) || want == "" && got != "" {
			t.Errorf("jq %s = %q, want %q", expr, got, want)
		}
	}
	own := ralph(t, dir, env, nil, "--base-url", srv.URL, "-p", "-y", "--output-format", "stream-json", "list the files")
	if own.code != 0 || !strings.HasPrefix(own.stdout, `{"type":"init","schema_version":1,`) || strings.Contains(own.stdout, `"type":"system"`) {
		t.Errorf("ralph's own stream-json changed: exit %d\n%s", own.code, own.stdout)
	}
}

// TestClaudeShapeFlagsComplete: the shell completes --stream-shape and
// --input-format with their values, each said in a few words.
func TestClaudeShapeFlagsComplete(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	for flag, want := range map[string]string{
		"--stream-shape": "ralph\tralph's events (docs/events.md)|claude\tthe lines of claude -p --output-format stream-json",
		"--input-format": "text\tthe task as an argument|stream-json\tClaude Code's user messages on standard input",
	} {
		if got := strings.Join(complete(t, dir, env, flag, ""), "|"); got != want {
			t.Errorf("__complete %s = %q, want %q", flag, got, want)
		}
	}
}
