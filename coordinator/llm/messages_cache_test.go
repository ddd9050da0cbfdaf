package llm

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// cacheMarker is a breakpoint as the request encodes it.
var cacheMarker = regexp.MustCompile(`,"cache_control":\{"type":"ephemeral"\}`)

// growingConversation is three successive requests of one session: a
// task, a tool turn with thinking and two calls, their results with a
// queued message, and an answer and the next message.
func growingConversation() []Request {
	tools := []conversation.ToolDef{
		{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "bash", Description: "Runs a command.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
	}
	h := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "You are ralph, a coding agent. <env>linux</env> & more"},
		{Role: conversation.RoleUser, Content: "Fix the failing test in a.go."},
	}
	var reqs []Request
	snap := func() {
		reqs = append(reqs, Request{Model: claudeModel, Tools: tools, Messages: append([]conversation.Message(nil), h...)})
	}
	snap()
	h = append(h,
		conversation.Message{Role: conversation.RoleAssistant, Content: "Let me look.",
			Opaque: []conversation.OpaqueBlock{{Provider: "anthropic", Block: json.RawMessage(`{"type":"thinking","thinking":"Read both.","signature":"c2ln"}`)}},
			ToolCalls: []conversation.ToolCall{
				{ID: "toolu_1", Name: "read_file", Arguments: `{"path": "a.go"}`},
				{ID: "toolu_2", Name: "bash", Arguments: `{"command":"go test ./..."}`},
			}},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "toolu_1", Name: "read_file", Content: "package a\n"},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "toolu_2", Name: "bash", Content: "FAIL a_test.go:3"},
		conversation.Message{Role: conversation.RoleUser, Content: "(queued) also keep it short"},
	)
	snap()
	h = append(h,
		conversation.Message{Role: conversation.RoleAssistant, Content: "Fixed: the test expected 2."},
		conversation.Message{Role: conversation.RoleUser, Content: "Now run the linter."},
	)
	snap()
	return reqs
}

// TestMessagesPrefixIsByteStable: with the cache markers taken out, each
// request's body up to the end of the previous request's messages is the
// previous request's body, byte for byte, and each request after the first
// marks the previous request's last block, so that it reads from the
// cache what the previous one wrote.
func TestMessagesPrefixIsByteStable(t *testing.T) {
	cfg := messagesConfig()
	cfg.ThinkingTokens = 2048
	var prev []byte
	var prevMsgs int
	for i, req := range growingConversation() {
		// A new client each time: the bytes must not depend on what this
		// process sent before (a session continued with -c).
		data, err := messagesBody(New(cfg), req)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := messagesBody(New(cfg), req)
		if !bytes.Equal(data, again) {
			t.Fatalf("request %d encodes differently twice", i)
		}
		if n := len(cacheMarker.FindAll(data, -1)); n > 4 || n < 3 {
			t.Errorf("request %d has %d breakpoints, want 3 or 4 (at most 4 are allowed)", i, n)
		}
		var decoded struct {
			Tools []struct {
				CacheControl any `json:"cache_control"`
			} `json:"tools"`
			System []struct {
				CacheControl any `json:"cache_control"`
			} `json:"system"`
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					CacheControl any `json:"cache_control"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(data, &decoded); err != nil {
			t.Fatalf("request %d: %v\n%s", i, err, data)
		}
		lastMarked := func(m int) bool {
			c := decoded.Messages[m].Content
			return c[len(c)-1].CacheControl != nil
		}
		if decoded.Tools[len(decoded.Tools)-1].CacheControl == nil || decoded.System[len(decoded.System)-1].CacheControl == nil {
			t.Errorf("request %d: the tools or the system prompt carry no breakpoint", i)
		}
		if !lastMarked(len(decoded.Messages) - 1) {
			t.Errorf("request %d: its last block carries no breakpoint", i)
		}
		if prev != nil {
			if !lastMarked(prevMsgs - 1) {
				t.Errorf("request %d does not mark the previous request's last block (message %d)", i, prevMsgs-1)
			}
			was := bytes.TrimSuffix(cacheMarker.ReplaceAll(prev, nil), []byte("]}"))
			now := cacheMarker.ReplaceAll(data, nil)
			if !bytes.HasPrefix(now, was) {
				n := 0
				for n < len(was) && n < len(now) && was[n] == now[n] {
					n++
				}
				t.Errorf("request %d's body departs from request %d's at byte %d:\nwas …%s\nnow …%s", i, i-1, n, was[max(0, n-80):min(len(was), n+80)], now[max(0, n-80):min(len(now), n+80)])
			}
		}
		prev, prevMsgs = data, len(decoded.Messages)
	}
}

// TestMessagesWireRules: the rules of messagesOf and thinkingFits.
func TestMessagesWireRules(t *testing.T) {
	think := conversation.OpaqueBlock{Provider: "anthropic", Block: json.RawMessage(`{"type":"thinking","thinking":"t","signature":"s"}`)}
	gemini := conversation.OpaqueBlock{Provider: "gemini", Block: json.RawMessage(`{"thought_signature":"g"}`)}
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "sys one"},
		{Role: conversation.RoleSystem, Content: "sys two"},
		{Role: conversation.RoleUser, Content: "refused text", Refused: "HTTP 400: no"},
		{Role: conversation.RoleUser, Content: "task"},
		{Role: conversation.RoleAssistant, Content: "stopped half"},
		{Role: conversation.RoleAssistant, Opaque: []conversation.OpaqueBlock{gemini, think},
			ToolCalls: []conversation.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{}`}}},
		{Role: conversation.RoleTool, ToolCallID: "toolu_1", Content: ""},
		{Role: conversation.RoleSystem, Content: "a note later on"},
		{Role: conversation.RoleUser, Content: "  "},
	}
	sys, wire := New(messagesConfig()).messagesOf(msgs)
	if len(sys) != 2 || sys[0].Text != "sys one" || sys[1].Text != "sys two" {
		t.Errorf("system = %+v", sys)
	}
	got, _ := json.Marshal(wire)
	want := `[{"role":"user","content":[{"type":"text","text":"task"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"stopped half"},{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"},{"type":"text","text":"a note later on"}]}]`
	if string(got) != want {
		t.Errorf("wire =\n%s\nwant\n%s", got, want)
	}
	if !thinkingFits(wire) {
		t.Errorf("a tool turn that begins with its thinking does not fit thinking")
	}

	// A tool turn without thinking (written with thinking off, or by
	// another provider) sends its results without thinking.
	cfg := messagesConfig()
	cfg.ThinkingTokens = 2048
	c := New(cfg)
	plain := []conversation.Message{
		{Role: conversation.RoleUser, Content: "task"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{}`}}},
		{Role: conversation.RoleTool, ToolCallID: "toolu_1", Content: "ok"},
	}
	for _, tc := range []struct {
		msgs     []conversation.Message
		thinking bool
	}{
		{plain[:1], true},
		{plain, false},
		{append(append([]conversation.Message(nil), plain...), conversation.Message{Role: conversation.RoleAssistant, Content: "done"},
			conversation.Message{Role: conversation.RoleUser, Content: "next"}), true},
	} {
		data, err := messagesBody(c, Request{Model: claudeModel, Messages: tc.msgs})
		if err != nil {
			t.Fatal(err)
		}
		if has := bytes.Contains(data, []byte(`"thinking":{"type":"enabled"`)); has != tc.thinking {
			t.Errorf("%d messages: thinking %v, want %v", len(tc.msgs), has, tc.thinking)
		}
	}
}

// FuzzMessagesStreamNeverPanics: whatever a Messages API stream carries,
// reading and assembling it returns an answer or an error, never a panic.
func FuzzMessagesStreamNeverPanics(f *testing.F) {
	f.Add(textTurnForFuzz)
	f.Add("data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n")
	f.Add("data: {\"type\":\"content_block_start\",\"index\":70000,\"content_block\":{\"type\":\"tool_use\"}}\n")
	f.Add("data: {\"type\":\"error\",\"error\":null}\ndata: {not json\n")
	f.Add("event: ping\ndata:\n\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":-5}}\n")
	f.Fuzz(func(t *testing.T, stream string) {
		turn := &messagesTurn{emit: func(Delta) {}}
		_ = turn.read(strings.NewReader(stream))
		if _, err := turn.finish("anthropic"); err != nil {
			t.Fatalf("finish: %v", err)
		}
	})
}

const textTurnForFuzz = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}   \n\n" +
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n" +
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}\n" +
	"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n" +
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}\n" +
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\ndata: {\"type\":\"message_stop\"}\n"

func TestMessagesTokenLimits(t *testing.T) {
	cases := []struct {
		model              string
		maxOut, thinking   int
		wantMax, wantThink int
	}{
		{"claude-sonnet-4-5", 0, 0, 16384, 0},
		{"claude-3-5-haiku-latest", 0, 0, 8192, 0},
		{"claude-3-haiku-20240307", 0, 0, 4096, 0},
		{"claude-sonnet-4-5", 1000, 0, 1000, 0},
		{"claude-sonnet-4-5", 0, 8000, 16384, 8000},
		{"claude-sonnet-4-5", 0, 500, 16384, 1024},
		{"claude-sonnet-4-5", 4000, 8000, 12000, 8000},
		{"claude-sonnet-4-5", 0, 60000, 64000, 60000},
		// Claude Code's MAX_THINKING_TOKENS=31999 on a model that writes
		// at most 32000 tokens.
		{"claude-opus-4-1-20250805", 0, 31999, 32000, 31999},
		{"claude-opus-4-20250514", 0, 40000, 32000, 27904},
		{"some-proxy/claude-opus-4-5", 0, 0, 16384, 0},
		{"my-gateway-model", 0, 100000, 116384, 100000},
	}
	for _, tc := range cases {
		c := New(Config{Protocol: "anthropic", MaxOutputTokens: tc.maxOut, ThinkingTokens: tc.thinking})
		gotMax, gotThink := c.tokenLimits(tc.model, true)
		if gotMax != tc.wantMax || gotThink != tc.wantThink {
			t.Errorf("%s (max %d, thinking %d): max_tokens %d, budget %d; want %d, %d", tc.model, tc.maxOut, tc.thinking, gotMax, gotThink, tc.wantMax, tc.wantThink)
		}
		if gotThink > 0 && gotThink >= gotMax {
			t.Errorf("%s: budget %d not below max_tokens %d", tc.model, gotThink, gotMax)
		}
	}
}
