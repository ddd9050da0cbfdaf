package memory

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestRedactionLeavesOpaqueBlocksAlone: the redactor rewrites a
// message's text and calls, never its opaque blocks, which go back to
// their provider byte for byte after a resume (the Responses API's
// encrypted reasoning, whose bytes may hold anything; a summary with "<"
// and "&"); a block that holds the secret is left out of the record
// rather than spoilt; a child's messages are recorded alike.
func TestRedactionLeavesOpaqueBlocksAlone(t *testing.T) {
	const secret = "sk-proj-AbCdEf0123456789"
	reasoning := json.RawMessage(`{"before":"call_1","model":"gpt-5-codex","reasoning":{"type":"reasoning","summary":[{"type":"summary_text","text":"<plan> & \"quote\""}],"encrypted_content":"gAAAAB0123456789+/=="}}`)
	thinking := json.RawMessage(`{"type":"thinking","thinking":"the key is ` + secret + `","signature":"c2ln"}`)
	msg := conversation.Message{Role: conversation.RoleAssistant, Content: "I saw " + secret,
		Opaque:    []conversation.OpaqueBlock{{Provider: "openai", Block: reasoning}, {Provider: "anthropic", Block: thinking}},
		ToolCalls: []conversation.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"echo ` + secret + `"}`}}}
	fs := afero.NewMemMapFs()
	s := newSession(t, fs, root, secret)
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "go"}, msg); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAgentMessages("child-1", msg); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(s.Dir, "messages.jsonl"), filepath.Join(s.Dir, AgentsDir, "messages.jsonl")} {
		data := []byte(readString(t, fs, path))
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds the secret:\n%s", path, data)
		}
		if !bytes.Contains(data, reasoning) {
			t.Errorf("%s does not hold the reasoning block byte for byte:\n%s", path, data)
		}
		if bytes.Contains(data, []byte(`"thinking"`)) {
			t.Errorf("%s holds the thinking that read the key:\n%s", path, data)
		}
	}
	msgs, err := LoadMessages(fs, s.Dir)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("LoadMessages = %+v, %v", msgs, err)
	}
	got := msgs[1]
	want := []conversation.OpaqueBlock{{Provider: "openai", Block: reasoning}}
	if !reflect.DeepEqual(got.Opaque, want) || got.Content != "I saw [REDACTED]" || got.ToolCalls[0].Arguments != `{"command":"echo [REDACTED]"}` {
		t.Errorf("read back %+v", got)
	}
}
