package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// growingCodexConversation is three successive requests of one session on
// the Responses API: a task; a turn with reasoning, a preamble and two
// calls, their results and a queued message; an answer and the next
// message.
func growingCodexConversation() []Request {
	tools := []conversation.ToolDef{
		{Name: "shell_command", Description: "Runs a shell command <and returns its output>.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
		applyPatch,
	}
	reasoning := func(before, enc string) conversation.OpaqueBlock {
		return conversation.OpaqueBlock{Provider: "openai", Block: json.RawMessage(`{"before":"` + before + `","model":"gpt-5-codex","reasoning":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan** <look> & fix"}],"encrypted_content":"` + enc + `"}}`)}
	}
	h := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "You are ralph, a coding agent. <env>linux</env> & more"},
		{Role: conversation.RoleUser, Content: "Fix the failing test in a.go."},
	}
	var reqs []Request
	snap := func() {
		reqs = append(reqs, Request{Model: codexModel, Tools: tools, CacheKey: "0190-session", Messages: append([]conversation.Message(nil), h...)})
	}
	snap()
	h = append(h,
		conversation.Message{Role: conversation.RoleAssistant, Content: "Let me look.",
			Opaque: []conversation.OpaqueBlock{reasoning("", "gAAAA1"), reasoning("call_2", "gAAAA2")},
			ToolCalls: []conversation.ToolCall{
				{ID: "call_1", Name: "shell_command", Arguments: `{"command": "cat a.go"}`},
				{ID: "call_2", Name: "apply_patch", Arguments: `{"input":"*** Begin Patch\n*** End Patch\n"}`},
			}},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "shell_command", Content: "package a\n"},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_2", Name: "apply_patch", Content: "Success."},
		conversation.Message{Role: conversation.RoleUser, Content: "(queued) also keep it short"},
	)
	snap()
	h = append(h,
		conversation.Message{Role: conversation.RoleAssistant, Content: "Fixed: the test expected 2.", Opaque: []conversation.OpaqueBlock{reasoning("", "gAAAA3")}},
		conversation.Message{Role: conversation.RoleUser, Content: "Now run the linter."},
	)
	snap()
	return reqs
}

// inputEnd is where a body's input array ends (its closing bracket): the
// tools follow it, and `],"tools":` cannot be inside a JSON string.
func inputEnd(t *testing.T, body []byte) int {
	t.Helper()
	i := bytes.Index(body, []byte(`],"tools":`))
	if i < 0 {
		t.Fatalf("no tools after the input in %s", body)
	}
	return i
}

// TestResponsesPrefixIsByteStable: each request's body up to the end of
// the previous request's input items is the previous request's body,
// byte for byte, whichever client (process) encodes it; and the tools,
// the instructions and the fields after the input are the same bytes.
func TestResponsesPrefixIsByteStable(t *testing.T) {
	cfg := responsesConfig()
	cfg.MaxOutputTokens = 8192
	var prev []byte
	for i, req := range growingCodexConversation() {
		data, err := responsesBody(New(cfg), req)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := responsesBody(New(cfg), req); !bytes.Equal(data, again) {
			t.Fatalf("request %d encodes differently twice", i)
		}
		if !json.Valid(data) {
			t.Fatalf("request %d is not JSON: %s", i, data)
		}
		if prev != nil {
			was, now := prev[:inputEnd(t, prev)], data
			if !bytes.HasPrefix(now, was) {
				n := 0
				for n < len(was) && n < len(now) && was[n] == now[n] {
					n++
				}
				t.Errorf("request %d's body departs from request %d's at byte %d:\nwas …%s\nnow …%s", i, i-1, n, was[max(0, n-80):min(len(was), n+80)], now[max(0, n-80):min(len(now), n+80)])
			}
			if a, b := prev[inputEnd(t, prev):], data[inputEnd(t, data):]; !bytes.Equal(a, b) {
				t.Errorf("request %d's tools and options differ from request %d's:\n%s\n%s", i, i-1, b, a)
			}
		}
		prev = data
	}
	// The reasoning's text is given back as it came, "<" and "&" too.
	if !bytes.Contains(prev, []byte(`"text":"**Plan** <look> & fix"`)) {
		t.Errorf("the reasoning was re-escaped: %s", prev)
	}
}

// TestOpaqueBlocksNeverCrossWires: an assistant turn holding every
// wire's opaque blocks, all marked with one provider (as an endpoint
// known by its URL only marks them), gives each wire its own blocks
// only: Anthropic's thinking to the Messages API, Gemini's signature to
// chat completions, the reasoning to the Responses API.
func TestOpaqueBlocksNeverCrossWires(t *testing.T) {
	for _, provider := range []string{"", "openai", "anthropic", "gemini"} {
		mark := provider
		if mark == "" {
			mark = "openai"
		}
		think := conversation.OpaqueBlock{Provider: mark, Block: json.RawMessage(`{"type":"thinking","thinking":"THINK","signature":"SIG"}`)}
		gemini := conversation.OpaqueBlock{Provider: mark, Block: json.RawMessage(`{"tool_call_id":"call_1","extra_content":{"google":{"thought_signature":"GEMINI"}}}`)}
		reason := conversation.OpaqueBlock{Provider: mark, Block: json.RawMessage(`{"before":"call_1","model":"` + codexModel + `","reasoning":{"type":"reasoning","summary":[],"encrypted_content":"ENCRYPTED"}}`)}
		msgs := []conversation.Message{
			{Role: conversation.RoleUser, Content: "task"},
			{Role: conversation.RoleAssistant, Opaque: []conversation.OpaqueBlock{think, gemini, reason},
				ToolCalls: []conversation.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{}`}}},
			{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "bash", Content: "ok"},
		}
		req := Request{Model: codexModel, Messages: msgs}
		only := func(wire string, body []byte, want string) {
			t.Helper()
			for _, s := range []string{"THINK", "GEMINI", "ENCRYPTED"} {
				if has := bytes.Contains(body, []byte(s)); has != (s == want) {
					t.Errorf("provider %q, %s: carries %s: %v\n%s", provider, wire, s, has, body)
				}
			}
		}

		mcfg := messagesConfig()
		mcfg.Provider = provider
		if provider == "" {
			// A URL-only endpoint's Messages client marks its blocks
			// "anthropic", so the test's blocks are another provider's.
			mcfg.Provider = mark
		}
		mbody, err := messagesBody(New(mcfg), Request{Model: claudeModel, Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		only("Messages API", mbody, "THINK")

		ccfg := fastConfig()
		ccfg.Provider = mark
		cc := New(ccfg)
		sigs, _ := json.Marshal(cc.signatures(msgs))
		chat, _ := json.Marshal(toOpenAI(cc, Request{Model: "gpt-4o", Messages: msgs}))
		only("chat completions", append(sigs, chat...), "GEMINI")

		rcfg := responsesConfig()
		rcfg.Provider = provider
		rbody, err := responsesBody(New(rcfg), req)
		if err != nil {
			t.Fatal(err)
		}
		only("Responses API", rbody, "ENCRYPTED")
	}
	if !strings.Contains(string(mustJSON(thinkingBlock(json.RawMessage(`{"type":"redacted_thinking","data":"x"}`)))), "true") {
		t.Error("a redacted_thinking block is not the Messages API's")
	}
}

// TestReasoningBlockForms: a block in the form keep writes is read
// without decoding its reasoning, and reads as the decoder reads it;
// one in another form (fields reordered, escapes, spaces) is decoded;
// another wire's block is none.
func TestReasoningBlockForms(t *testing.T) {
	reasoning := `{"type":"reasoning","summary":[{"type":"summary_text","text":"a \"quoted\" } brace"}],"encrypted_content":"E"}`
	for _, block := range []string{
		`{"before":"call_1","model":"gpt-5-codex","reasoning":` + reasoning + `}`,
		`{"before":"call_\u0031","model":"gpt-5-codex","reasoning":` + reasoning + `}`,
		`{"model":"gpt-5-codex","reasoning":` + reasoning + `,"before":"call_1"}`,
		`{ "before": "call_1", "model": "gpt-5-codex", "reasoning": ` + reasoning + ` }`,
	} {
		b, ok := reasoningOf(conversation.OpaqueBlock{Provider: "openai", Block: json.RawMessage(block)}, "openai")
		if !ok || b.Before != "call_1" || b.Model != codexModel || string(b.Reasoning) != reasoning {
			t.Errorf("%s read as %+v (%s), %v", block, b, b.Reasoning, ok)
		}
	}
	for _, block := range []string{
		`{"type":"thinking","thinking":"the reasoning","signature":"s"}`,
		`{"tool_call_id":"call_1","extra_content":{"reasoning":"x"}}`,
		`{"before":"call_1","model":"m","reasoning":"not an item"}`,
	} {
		if b, ok := reasoningOf(conversation.OpaqueBlock{Provider: "openai", Block: json.RawMessage(block)}, "openai"); ok {
			t.Errorf("%s read as a reasoning block: %+v", block, b)
		}
	}
}
