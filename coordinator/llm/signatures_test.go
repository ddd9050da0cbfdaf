package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// geminiSignatureStream is a streamed Gemini 3 answer over Google's
// OpenAI-compatible endpoint with two parallel tool calls, the first with
// a thought signature. Its shape follows Google's OpenAI-compatibility
// documentation (function calling with thought signatures): each call
// whole in one chunk, without an index, the signature in extra_content.
// No real exchange could be recorded from here; the signature is made up.
const geminiSignatureStream = "testdata/gemini_tool_call_signature.sse"

// chatSSEServer answers each chat request with the next body of bodies as an
// event stream and keeps the request bodies.
type chatSSEServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newSSEServer(t *testing.T, bodies ...string) *chatSSEServer {
	t.Helper()
	s := &chatSSEServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, b)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, bodies[min(n, len(bodies)-1)])
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *chatSSEServer) body(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.bodies[i])
}

func (s *chatSSEServer) request(t *testing.T, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(s.bodies[i], &m); err != nil {
		t.Fatalf("request %d: %v: %s", i, err, s.bodies[i])
	}
	return m
}

const textStream = "data: {\"choices\":[{\"delta\":{\"content\":\"It is sunny.\"},\"index\":0}]}\n\n" +
	"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\",\"index\":0}]}\n\ndata: [DONE]\n\n"

// Gemini's tool calls come without an index; a thought signature on one
// is kept with the turn and goes back unchanged on that call, to Gemini
// only.
func TestGeminiThoughtSignatureGoesBack(t *testing.T) {
	recorded, err := os.ReadFile(geminiSignatureStream)
	if err != nil {
		t.Fatal(err)
	}
	srv := newSSEServer(t, string(recorded), textStream)
	cfg := fastConfig()
	cfg.BaseURL, cfg.Provider = srv.URL, "gemini"
	c := New(cfg)
	weather := conversation.ToolDef{Name: "get_current_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)}
	req := Request{Model: "gemini-3-pro-preview", Tools: []conversation.ToolDef{weather},
		Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "Weather in Paris and London?"}}}
	resp, err := c.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "function-call-7913815012542466347" || calls[1].Arguments != `{"location":"London"}` {
		t.Fatalf("tool calls %+v", calls)
	}
	if resp.Usage.InputTokens != 118 {
		t.Errorf("usage %+v", resp.Usage)
	}
	op := resp.Message.Opaque
	if len(op) != 1 || op[0].Provider != "gemini" || !strings.Contains(string(op[0].Block), `"tool_call_id":"function-call-7913815012542466347"`) {
		t.Fatalf("opaque blocks %+v", op)
	}
	// The turn is stored and read back, as messages.jsonl does.
	stored, _ := json.Marshal(resp.Message)
	var turn conversation.Message
	if err := json.Unmarshal(stored, &turn); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, turn,
		conversation.Message{Role: conversation.RoleTool, ToolCallID: calls[0].ID, Name: "get_current_weather", Content: "sunny"},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: calls[1].ID, Name: "get_current_weather", Content: "rain"})
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	sent := srv.request(t, 1)["messages"].([]any)[1].(map[string]any)["tool_calls"].([]any)
	first, second := sent[0].(map[string]any), sent[1].(map[string]any)
	want := map[string]any{"google": map[string]any{"thought_signature": "CiQB0e2Kb7ZpZ2k3c2lnbmF0dXJlLWEtZm9yLXBhcmlz"}}
	if got, _ := json.Marshal(first["extra_content"]); string(got) != mustJSON(want) {
		t.Errorf("the first call went back with extra_content %s", got)
	}
	if _, ok := second["extra_content"]; ok {
		t.Errorf("the call without a signature got one: %v", second)
	}
	if first["id"] != calls[0].ID || first["function"].(map[string]any)["name"] != "get_current_weather" {
		t.Errorf("the call itself changed: %v", first)
	}

	// Another provider's client (a fallback, say) leaves it out.
	other := newSSEServer(t, textStream)
	cfg.BaseURL, cfg.Provider = other.URL, "openai"
	if _, err := New(cfg).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if body := other.body(0); strings.Contains(body, "extra_content") || strings.Contains(body, "thought_signature") {
		t.Errorf("another provider got Gemini's signature: %s", body)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Tool-call fragments without an index, as Gemini streams them: a new id
// starts a call, fragments without one continue it.
func TestToolCallsWithoutIndex(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\"}}]},\"index\":0}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"\\\"x\\\"}\"}}]},\"index\":0}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"type\":\"function\",\"function\":{\"name\":\"list_files\",\"arguments\":\"{}\"}}]},\"index\":0}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\",\"index\":0}]}\n\ndata: [DONE]\n\n"
	srv := newSSEServer(t, stream)
	cfg := fastConfig()
	cfg.BaseURL, cfg.Provider = srv.URL, "gemini"
	resp, err := New(cfg).Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "a" || calls[0].Arguments != `{"path":"x"}` || calls[1].Name != "list_files" {
		t.Errorf("calls %+v", calls)
	}
	if len(resp.Message.Opaque) != 0 {
		t.Errorf("opaque blocks without any extra content: %+v", resp.Message.Opaque)
	}
}
