package llmtest

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// postMessages sends a Messages request and returns the status and body.
func postMessages(t *testing.T, srv *Server, body string) (int, string) {
	t.Helper()
	resp := postAPI(t, srv, "/v1/messages", body, "Anthropic-Version", "2023-06-01")
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// A thinking turn and its tool calls, as the stand-in signs them.
func thinkingTurn(thinking string, ids ...string) string {
	blocks := []string{fmt.Sprintf(`{"type":"thinking","thinking":%q,"signature":%q}`, thinking, signThinking(thinking))}
	for _, id := range ids {
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"ls"}}`, id))
	}
	return `{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}`
}

func results(ids ...string) string {
	var blocks []string
	for _, id := range ids {
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool_result","tool_use_id":%q,"content":"ok"}`, id))
	}
	return `{"role":"user","content":[` + strings.Join(blocks, ",") + `]}`
}

// The stand-in refuses what the real API refuses, with HTTP 400, an
// invalid_request_error and the API's words, and consumes no scripted
// response for it; what the API accepts is served.
func TestMessagesChecks(t *testing.T) {
	user := `{"role":"user","content":"hi"}`
	thinking := `"thinking":{"type":"enabled","budget_tokens":1024},`
	cc := `,"cache_control":{"type":"ephemeral"}`
	text := func(s string) string { return `{"type":"text","text":"` + s + `"` + cc + `}` }
	cases := []struct {
		name, body, want string
	}{
		{"no max_tokens", `{"model":"c","messages":[` + user + `]}`, "max_tokens: Field required"},
		{"system as a role", `{"model":"c","max_tokens":10,"messages":[{"role":"system","content":"be brief"},` + user + `]}`,
			"messages.0.role: Input should be 'user' or 'assistant'"},
		{"five breakpoints", `{"model":"c","max_tokens":10,"system":[` + text("s") + `],"messages":[{"role":"user","content":[` +
			text("a") + `,` + text("b") + `,` + text("c") + `,` + text("d") + `]}]}`,
			"A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{"result not right after its call", `{"model":"c","max_tokens":10,"messages":[` + user + `,` + thinkingTurn("t", "toolu_1") + `,` + user + `,` + results("toolu_1") + `]}`,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."},
		{"one of two results missing", `{"model":"c","max_tokens":10,"messages":[` + user + `,` + thinkingTurn("t", "toolu_1", "toolu_2") + `,` + results("toolu_2") + `]}`,
			"immediately after: toolu_1."},
		{"text before the results", `{"model":"c","max_tokens":10,"messages":[` + user + `,` + thinkingTurn("t", "toolu_1") +
			`,{"role":"user","content":[{"type":"text","text":"and also"},{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`,
			"`tool_result` blocks must come first"},
		{"a result for no call", `{"model":"c","max_tokens":10,"messages":[` + user + `,{"role":"assistant","content":"sure"},` + results("toolu_9") + `]}`,
			"unexpected `tool_use_id` found in `tool_result` blocks: toolu_9."},
		{"thinking dropped from the tool turn", `{"model":"c","max_tokens":2000,` + thinking + `"messages":[` + user +
			`,{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]},` + results("toolu_1") + `]}`,
			"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`."},
		{"a changed thinking text", `{"model":"c","max_tokens":2000,` + thinking + `"messages":[` + user +
			`,{"role":"assistant","content":[{"type":"thinking","thinking":"changed","signature":"` + signThinking("original") + `"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]},` + results("toolu_1") + `]}`,
			"messages.1.content.0: Invalid `signature` in `thinking` block"},
		{"budget not below max_tokens", `{"model":"c","max_tokens":1024,` + thinking + `"messages":[` + user + `]}`,
			"`max_tokens` must be greater than `thinking.budget_tokens`."},
		{"a small budget", `{"model":"c","max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":100},"messages":[` + user + `]}`,
			"budget_tokens: Input should be greater than or equal to 1024"},
		{"temperature with thinking", `{"model":"c","max_tokens":4000,"temperature":0.2,` + thinking + `"messages":[` + user + `]}`,
			"`temperature` may only be set to 1 when thinking is enabled."},
		{"a prefill ending in a space", `{"model":"c","max_tokens":10,"messages":[` + user + `,{"role":"assistant","content":"Sure, "}]}`,
			"messages: final assistant content cannot end with trailing whitespace"},
		{"an empty text block", `{"model":"c","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`,
			"text content blocks must be non-empty"},
	}
	srv := NewServer(&Scenario{Responses: []Response{{Text: "served"}, {Text: "served to the beta"}}})
	defer srv.Close()
	for _, c := range cases {
		status, body := postMessages(t, srv, c.body)
		if status != http.StatusBadRequest || !strings.Contains(body, `"type":"invalid_request_error"`) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s\nwant 400 with %q", c.name, status, body, c.want)
		}
	}
	// With its thinking and signature sent back, both results in one user
	// message and the person's text after them, the tool turn is served.
	ok := `{"model":"c","max_tokens":2000,` + thinking + `"messages":[` + user + `,` + thinkingTurn("Two looks.", "toolu_1", "toolu_2") +
		`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a"},{"type":"tool_result","tool_use_id":"toolu_2","content":"b"},{"type":"text","text":"and then?"}]}]}`
	if status, body := postMessages(t, srv, ok); status != http.StatusOK || !strings.Contains(body, "served") {
		t.Errorf("a well-formed tool turn: %d %s", status, body)
	}
	// The beta API (Claude Code calls /v1/messages?beta=true) serves a
	// system message inside messages, which Claude Code 2.1.197 sends.
	beta := `{"model":"c","max_tokens":10,"messages":[` + user + `,{"role":"system","content":"Available agent types"},` + thinkingTurn("t", "toolu_3") + `,` + results("toolu_3") + `]}`
	resp := postAPI(t, srv, "/v1/messages?beta=true", beta)
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "served to the beta") {
		t.Errorf("a beta request with a system message: %d %s", resp.StatusCode, b)
	}
	if n := len(srv.Requests()); n != len(cases)+2 {
		t.Errorf("%d requests recorded, want %d", n, len(cases)+2)
	}
}

// With thinking on, a scripted Reasoning streams as a thinking block,
// thinking_delta then one signature_delta, and a redacted_thinking block
// carries opaque data; both go back as they came. Without thinking on,
// the same response has no thinking block.
func TestMessagesThinkingStream(t *testing.T) {
	resp := Response{Reasoning: "First I look at the files.", RedactedThinking: "hidden", Text: "Done."}
	srv := NewServer(&Scenario{Responses: []Response{resp, resp}})
	defer srv.Close()
	body := `{"model":"c","stream":true,"max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`
	events := readSSE(t, postAPI(t, srv, "/v1/messages", body))
	var thinking, signature, data string
	var deltas []string
	for _, e := range events {
		switch e.name {
		case "content_block_start":
			if b := e.data["content_block"].(map[string]any); b["type"] == "redacted_thinking" {
				data = b["data"].(string)
			}
		case "content_block_delta":
			d := e.data["delta"].(map[string]any)
			deltas = append(deltas, d["type"].(string))
			switch d["type"] {
			case "thinking_delta":
				thinking += d["thinking"].(string)
			case "signature_delta":
				signature = d["signature"].(string)
			}
		}
	}
	if thinking != resp.Reasoning || signature != signThinking(thinking) || !redactedByUs(data) {
		t.Errorf("thinking %q, signature %q, redacted %q", thinking, signature, data)
	}
	if deltas[0] != "thinking_delta" || deltas[1] != "signature_delta" || deltas[2] != "text_delta" {
		t.Errorf("delta order %q", deltas)
	}
	if names(events)[2] != "ping" {
		t.Errorf("no ping after the first block's start: %q", names(events))
	}
	// Thinking on and none scripted: the real API thinks all the same.
	srv2 := NewServer(&Scenario{Responses: []Response{{Text: "plain"}}})
	defer srv2.Close()
	if status, body := postMessages(t, srv2, strings.Replace(body, `"stream":true,`, "", 1)); status != http.StatusOK ||
		!strings.Contains(body, `"thinking":"`+defaultThinking+`"`) || !strings.Contains(body, signThinking(defaultThinking)) {
		t.Errorf("thinking on, none scripted: %d %s", status, body)
	}
	events = readSSE(t, postAPI(t, srv, "/v1/messages", strings.Replace(body, `"thinking":{"type":"enabled","budget_tokens":1024},`, "", 1)))
	for _, e := range events {
		if e.name == "content_block_start" && e.data["content_block"].(map[string]any)["type"] == "thinking" {
			t.Errorf("a thinking block without thinking on")
		}
	}
}

// The data lines are padded inside the object, as the real server's are,
// and stay valid JSON.
func TestMessagesPadding(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "a padded answer, in several chunks"}}})
	defer srv.Close()
	raw, err := io.ReadAll(postAPI(t, srv, "/v1/messages", `{"model":"c","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`).Body)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^data: \{"type":"content_block_delta",.*[^ ]   +\}$`).Match(raw) || !strings.Contains(string(raw), `data: {"type": "ping"`) {
		t.Errorf("no padding or no real ping in\n%s", raw)
	}
}
