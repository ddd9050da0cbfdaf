package llm

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestStreamTextDeltasInOrder(t *testing.T) {
	// Multi-byte runes make sure chunking never splits or reorders them.
	const text = "Héllo wörld ✓ — the quick brown fox jumps over the lazy dog."
	srv := serveResponses(t, llmtest.Response{Text: text, ChunkSize: 5})
	var log deltaLog
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if want := splitRunes(text, 5); !reflect.DeepEqual(log.texts(), want) {
		t.Errorf("text deltas = %q, want %q", log.texts(), want)
	}
	if resp.Message.Content != text {
		t.Errorf("content = %q, want %q", resp.Message.Content, text)
	}
	if resp.Message.Role != conversation.RoleAssistant || resp.FinishReason != "stop" || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("role %q, finish %q, calls %v; want assistant, stop, none", resp.Message.Role, resp.FinishReason, resp.Message.ToolCalls)
	}
	if len(log.retries()) != 0 || len(log.toolNames()) != 0 {
		t.Errorf("unexpected deltas: %+v", log.all())
	}
}

func TestStreamNilOnDelta(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "no callback", ToolCalls: []llmtest.ToolCall{{Name: "x", Arguments: "{}"}}})
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "no callback" || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("resp = %+v", resp)
	}
}

func TestStreamAssemblesToolCalls(t *testing.T) {
	calls := []llmtest.ToolCall{
		{ID: "call_read", Name: "read_file", ArgChunks: []string{`{"pa`, `th":"main`, `.go"}`}},
		{ID: "call_run", Name: "run_command", ArgChunks: []string{`{"command":`, `"go test ./... -run 'A|B'"`, `}`}},
		// No id and no explicit chunks: the server picks an id and splits
		// the arguments itself, including inside a multi-byte rune's string.
		{Name: "write_file", Arguments: `{"path":"x.txt","content":"héllo\nwörld"}`},
	}
	for _, interleave := range []bool{false, true} {
		name := "sequential"
		if interleave {
			name = "interleaved"
		}
		t.Run(name, func(t *testing.T) {
			srv := serveResponses(t, llmtest.Response{Text: "Let me look.", ToolCalls: calls, InterleaveToolCalls: interleave})
			var log deltaLog
			resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("go"), log.add)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			got := resp.Message.ToolCalls
			if len(got) != len(calls) {
				t.Fatalf("got %d tool calls, want %d: %+v", len(got), len(calls), got)
			}
			ids := map[string]bool{}
			for i, want := range calls {
				wantArgs := strings.Join(want.ArgChunks, "") + want.Arguments
				if got[i].Name != want.Name || got[i].Arguments != wantArgs {
					t.Errorf("call %d = %s(%s), want %s(%s)", i, got[i].Name, got[i].Arguments, want.Name, wantArgs)
				}
				if want.ID != "" && got[i].ID != want.ID {
					t.Errorf("call %d id = %q, want %q", i, got[i].ID, want.ID)
				}
				if got[i].ID == "" || ids[got[i].ID] {
					t.Errorf("call %d id %q is empty or repeated", i, got[i].ID)
				}
				ids[got[i].ID] = true
				if !json.Valid([]byte(got[i].Arguments)) {
					t.Errorf("call %d arguments are not valid JSON: %s", i, got[i].Arguments)
				}
			}
			// One ToolName delta per call, when the call starts, in call order.
			if want := []string{"read_file", "run_command", "write_file"}; !reflect.DeepEqual(log.toolNames(), want) {
				t.Errorf("tool name deltas = %q, want %q", log.toolNames(), want)
			}
			if resp.Message.Content != "Let me look." || resp.FinishReason != "tool_calls" {
				t.Errorf("content %q finish %q", resp.Message.Content, resp.FinishReason)
			}
		})
	}
}

// Some local servers send whole tool calls in one delta without index or id;
// they must still come out as separate calls with distinct ids.
func TestStreamToolCallsWithoutIndexOrID(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Raw: []string{
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[` +
			`{"type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},` +
			`{"type":"function","function":{"name":"b","arguments":"{}"}}]},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}})
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("go"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []conversation.ToolCall{{ID: "call_0", Name: "a", Arguments: `{"x":1}`}, {ID: "call_1", Name: "b", Arguments: "{}"}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
		t.Errorf("calls = %+v, want %+v", resp.Message.ToolCalls, want)
	}
}

func TestStreamReportsUsage(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Text: "counted", Usage: &llmtest.Usage{PromptTokens: 1234, CompletionTokens: 56}},
		llmtest.Response{Text: "estimated"},
	)
	c := clientFor(srv, fastConfig())
	resp, err := c.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if want := (conversation.Usage{InputTokens: 1234, OutputTokens: 56}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	// Without scripted counts the fake estimates them from the body; all
	// that matters is that both directions were reported, not zero.
	resp, err = c.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Errorf("usage = %+v, want both counts positive", resp.Usage)
	}
}

func TestUsageAdd(t *testing.T) {
	got := conversation.Usage{InputTokens: 1, OutputTokens: 2}.Add(conversation.Usage{InputTokens: 10, OutputTokens: 20})
	if want := (conversation.Usage{InputTokens: 11, OutputTokens: 22}); got != want {
		t.Errorf("Add = %+v, want %+v", got, want)
	}
}

// wireRequest is the JSON the client must send, declared here rather than
// reusing go-openai's types so the test checks the wire format itself.
type wireRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// messages converts the wire messages back to ours, so a round trip through
// toOpenAI can be compared with what went in.
func (w wireRequest) messages() []conversation.Message {
	var out []conversation.Message
	for _, m := range w.Messages {
		msg := conversation.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, conversation.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		out = append(out, msg)
	}
	return out
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestStreamSendsConversationAndTools(t *testing.T) {
	req := Request{
		Model: testModel,
		Messages: []conversation.Message{
			{Role: conversation.RoleSystem, Content: "You are ralph."},
			{Role: conversation.RoleUser, Content: "Fix the <build> & \"tests\""},
			{Role: conversation.RoleAssistant, Content: "Looking.", ToolCalls: []conversation.ToolCall{
				{ID: "call_1", Name: "list_files", Arguments: `{"dir":"."}`},
				{ID: "call_2", Name: "read_file", Arguments: `{"path":"go.mod"}`},
			}},
			{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "list_files", Content: "a.go\nb.go"},
			{Role: conversation.RoleTool, ToolCallID: "call_2", Content: "module x"},
		},
		Tools: []conversation.ToolDef{
			{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(
				`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			// No parameters: OpenAI rejects a function without a schema, so
			// the client must send an empty object schema.
			{Name: "list_all", Description: "List everything"},
		},
	}
	srv := serveResponses(t, llmtest.Response{Text: "ok"})
	if _, err := clientFor(srv, fastConfig()).Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	if got, want := reqs[0].Header.Get("Authorization"), "Bearer "+testKey; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	var w wireRequest
	if err := json.Unmarshal(reqs[0].Body, &w); err != nil {
		t.Fatalf("request body: %v\n%s", err, reqs[0].Body)
	}
	if w.Model != testModel || !w.Stream {
		t.Errorf("model %q stream %v", w.Model, w.Stream)
	}
	if w.StreamOptions == nil || !w.StreamOptions.IncludeUsage {
		t.Errorf("stream_options.include_usage not set: %s", reqs[0].Body)
	}
	if got := w.messages(); !reflect.DeepEqual(got, req.Messages) {
		t.Errorf("messages round trip:\n got %+v\nwant %+v", got, req.Messages)
	}
	for _, m := range w.Messages {
		for _, tc := range m.ToolCalls {
			if tc.Type != "function" {
				t.Errorf("tool call %s type = %q, want function", tc.ID, tc.Type)
			}
		}
	}
	if len(w.Tools) != 2 {
		t.Fatalf("tools = %d, want 2: %s", len(w.Tools), reqs[0].Body)
	}
	wantParams := []string{string(req.Tools[0].Parameters), `{"type":"object","properties":{}}`}
	for i, tool := range w.Tools {
		if tool.Type != "function" || tool.Function.Name != req.Tools[i].Name || tool.Function.Description != req.Tools[i].Description {
			t.Errorf("tool %d = %+v, want %+v", i, tool, req.Tools[i])
		}
		if !jsonEqual(t, tool.Function.Parameters, []byte(wantParams[i])) {
			t.Errorf("tool %d parameters = %s, want %s", i, tool.Function.Parameters, wantParams[i])
		}
	}
}

// A local endpoint needs no key; the client must then send no
// Authorization header rather than an empty bearer token.
func TestStreamWithoutKeySendsNoAuthorization(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "ok"})
	cfg := fastConfig()
	cfg.APIKey = ""
	if _, err := clientFor(srv, cfg).Stream(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if h, ok := srv.Requests()[0].Header["Authorization"]; ok {
		t.Errorf("Authorization header sent without a key: %q", h)
	}
}

func TestNewDefaultsAndBaseURL(t *testing.T) {
	c := New(Config{BaseURL: "http://127.0.0.1:1/v1/"})
	if c.BaseURL() != "http://127.0.0.1:1/v1" {
		t.Errorf("BaseURL = %q, want the trailing slash trimmed", c.BaseURL())
	}
	if c.cfg.MaxAttempts != 5 || c.cfg.BaseBackoff <= 0 || c.cfg.MaxBackoff <= 0 || c.cfg.MaxRetryAfter <= 0 || c.cfg.IdleTimeout <= 0 {
		t.Errorf("zero config not defaulted: %+v", c.cfg)
	}
	if got := New(Config{}).BaseURL(); !strings.HasPrefix(got, "https://") {
		t.Errorf("default BaseURL = %q", got)
	}
}

func TestStreamToolCallFragmentsWithoutIndex(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Raw: []string{
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","type":"function","function":{"name":"a","arguments":"{\"p\":"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","type":"function","function":{"name":"b","arguments":""}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}})
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("go"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []conversation.ToolCall{{ID: "x1", Name: "a", Arguments: `{"p":1}`}, {ID: "x2", Name: "b", Arguments: "{}"}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
		t.Errorf("calls = %+v, want %+v", resp.Message.ToolCalls, want)
	}
}
