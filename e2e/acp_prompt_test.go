//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACPPromptStreamsToolCallAndDiff: a prompt through the npm client
// streams the model's answer as message chunks, its edit_file as a tool
// call of kind edit with the file's location, then the call's end with
// the diff (of the edit's strings, as the other agents' adapters send); its command as a tool call of kind execute, asked about and
// run in the sandbox.
func TestACPPromptStreamsToolCallAndDiff(t *testing.T) {
	t.Parallel()
	dir, env, _ := acpProject(t, toolScenario(t, "acp-stream", [][]toolCall{
		{{"edit_file", `{"path":"hello.txt","old_string":"hi","new_string":"hello"}`}},
		{{"run_command", `{"command":"touch made"}`}},
	}, "I changed hello.txt."))
	mustWrite(t, filepath.Join(dir, "hello.txt"), "hi\n")
	s := acpEditor(t, dir, env, acpPlan{Answers: []string{"yes"}, Steps: []acpStep{{Op: "new", Cwd: dir}, {Op: "prompt", Text: "say hello"}}})
	if r := s.stopReason(t, 0); r != "end_turn" {
		t.Fatalf("stop reason %q", r)
	}
	if got := readFileT(t, filepath.Join(dir, "hello.txt")); got != "hello\n" {
		t.Fatalf("hello.txt = %q", got)
	}
	if !exists(filepath.Join(dir, "made")) {
		t.Fatalf("the command did not run: %s", s.toolText())
	}
	kinds := s.kinds()
	for _, want := range []string{"available_commands_update", "tool_call tool_call_update", "agent_message_chunk"} {
		if !strings.Contains(kinds, want) {
			t.Errorf("updates %s lack %s", kinds, want)
		}
	}
	var calls []map[string]any
	var diff map[string]any
	var answer strings.Builder
	for _, u := range s.updates() {
		switch u["sessionUpdate"] {
		case "tool_call":
			calls = append(calls, u)
		case "tool_call_update":
			cs, _ := u["content"].([]any)
			for _, c := range cs {
				if cm, _ := c.(map[string]any); cm["type"] == "diff" {
					diff = cm
				}
			}
		case "agent_message_chunk":
			c, _ := u["content"].(map[string]any)
			txt, _ := c["text"].(string)
			answer.WriteString(txt)
		}
	}
	abs := filepath.Join(dir, "hello.txt")
	if len(calls) != 2 || calls[0]["kind"] != "edit" || calls[1]["kind"] != "execute" {
		t.Fatalf("tool calls %v", calls)
	}
	locs, _ := calls[0]["locations"].([]any)
	if len(locs) != 1 || locs[0].(map[string]any)["path"] != abs {
		t.Errorf("the edit's locations %v", locs)
	}
	if title, _ := calls[1]["title"].(string); !strings.Contains(title, "touch made") {
		t.Errorf("the command's title %q", title)
	}
	if diff == nil || diff["path"] != abs || diff["oldText"] != "hi" || diff["newText"] != "hello" {
		t.Errorf("diff %v", diff)
	}
	if answer.String() != "I changed hello.txt." {
		t.Errorf("answer %q", answer.String())
	}
	if asked := s.requests("session/request_permission"); len(asked) != 1 {
		t.Errorf("%d permission requests", len(asked))
	}
	if r := s.requests(""); len(r) != len(s.requests("session/request_permission")) {
		t.Errorf("ralph asked the editor for more than permission: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph")); err != nil {
		t.Errorf("no session was recorded: %v", err)
	}
}
