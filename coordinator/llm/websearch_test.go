package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
)

// searches is every search a delta log saw.
func (l *deltaLog) searches() []SearchInfo {
	var out []SearchInfo
	for _, d := range l.all() {
		if d.Search != nil {
			out = append(out, *d.Search)
		}
	}
	return out
}

// TestMessagesWebSearchStreamReplay replays a stream in the real one's
// shape (testdata/README.md): the server's search is shown as one search,
// never a tool call; the cited text is the answer; the search is counted;
// and the turn sent back on the next request is its text alone.
func TestMessagesWebSearchStreamReplay(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/anthropic_web_search_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveSSE(t, string(b), textTurn("You're welcome.", `{"input_tokens":5,"output_tokens":1}`))
	cfg := messagesConfig()
	cfg.BaseURL, cfg.WebSearch = srv.URL, true
	c := New(cfg)
	req := claudeRequest("What is the latest Go release?")
	var log deltaLog
	resp, err := c.Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchInfo{{Query: "latest Go release notes", Results: 3}}
	if got := log.searches(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("searches = %+v, want %+v", got, want)
	}
	if got, want := resp.Message.Content, "I'll look up the latest Go release.\n\nThe latest release is Go 1.25, six months after Go 1.24."; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if len(resp.Message.ToolCalls) != 0 || len(log.toolNames()) != 0 || len(resp.Message.Opaque) != 0 || resp.FinishReason != "stop" {
		t.Errorf("turn = %+v (%s), tool names %v", resp.Message, resp.FinishReason, log.toolNames())
	}
	if resp.Usage.WebSearches != 1 || resp.Usage.InputTokens != 9873 || resp.Usage.OutputTokens != 212 {
		t.Errorf("usage = %+v", resp.Usage)
	}

	req.Messages = append(req.Messages, resp.Message, conversation.Message{Role: conversation.RoleUser, Content: "thanks"})
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	second := string(srv.bodies[1])
	for _, gone := range []string{"server_tool_use", "web_search_tool_result", "encrypted_content", "citations", "srvtoolu_"} {
		if strings.Contains(second, gone) {
			t.Errorf("the second request carries %s back: %s", gone, second)
		}
	}
	var sent struct {
		Tools    []map[string]any `json:"tools"`
		Messages []mMessage       `json:"messages"`
	}
	if err := json.Unmarshal(srv.bodies[1], &sent); err != nil {
		t.Fatal(err)
	}
	if n := len(sent.Messages); n != 3 || sent.Messages[1].Role != "assistant" || len(sent.Messages[1].Content) != 1 || sent.Messages[1].Content[0].Type != "text" {
		t.Errorf("messages sent back = %+v", sent.Messages)
	}
	if len(sent.Tools) != 1 || sent.Tools[0]["type"] != "web_search_20250305" {
		t.Errorf("tools of the second request = %v", sent.Tools)
	}
}

// TestMessagesWebSearchToolOnlyWhenOn: the server tool is in tools when
// the client was told to offer it, first, so that the last function tool
// keeps its cache breakpoint; off, the request is as before.
func TestMessagesWebSearchToolOnlyWhenOn(t *testing.T) {
	t.Parallel()
	defs := []conversation.ToolDef{{Name: "read_file", Description: "read", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for _, on := range []bool{false, true} {
		srv := serveSSE(t, textTurn("ok", `{"input_tokens":5,"output_tokens":1}`))
		cfg := messagesConfig()
		cfg.BaseURL, cfg.WebSearch = srv.URL, on
		req := claudeRequest("hi")
		req.Tools = defs
		if _, err := New(cfg).Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		var sent struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := json.Unmarshal(srv.bodies[0], &sent); err != nil {
			t.Fatal(err)
		}
		if !on {
			if len(sent.Tools) != 1 || strings.Contains(string(srv.bodies[0]), "web_search") {
				t.Errorf("off: tools = %v", sent.Tools)
			}
			continue
		}
		if len(sent.Tools) != 2 {
			t.Fatalf("on: tools = %v", sent.Tools)
		}
		st := sent.Tools[0]
		if st["type"] != "web_search_20250305" || st["name"] != "web_search" || st["max_uses"] != float64(WebSearchMaxUses) {
			t.Errorf("on: the server tool = %v", st)
		}
		if sent.Tools[1]["name"] != "read_file" || sent.Tools[1]["cache_control"] == nil {
			t.Errorf("on: the function tool lost its place or breakpoint: %v", sent.Tools[1])
		}
	}
}

// TestMessagesWebSearchErrorResult: a search the API could not run comes
// back as an error object in place of the results.
func TestMessagesWebSearchErrorResult(t *testing.T) {
	t.Parallel()
	srv := serveSSE(t, events(
		`{"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"I could not search."}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30}}`,
		`{"type":"message_stop"}`))
	cfg := messagesConfig()
	cfg.BaseURL, cfg.WebSearch = srv.URL, true
	var log deltaLog
	resp, err := New(cfg).Stream(context.Background(), claudeRequest("hi"), log.add)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.searches(); len(got) != 1 || got[0] != (SearchInfo{Query: "x", Error: "max_uses_exceeded"}) {
		t.Errorf("searches = %+v", got)
	}
	if resp.Message.Content != "I could not search." || resp.Usage.WebSearches != 0 {
		t.Errorf("turn = %+v, usage %+v", resp.Message, resp.Usage)
	}
}

// openAIBodies is a chat completions server that answers every request
// with chunks and records the bodies.
func openAIBodies(t *testing.T, chunks ...string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprint(w, "data: "+c+"\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), bodies...)
	}
}

// TestOpenAIWebSearchOptionsForSearchModels: web_search_options goes only
// to a search model, with the switch on; the answer's url_citation
// annotations are the search's line.
func TestOpenAIWebSearchOptionsForSearchModels(t *testing.T) {
	t.Parallel()
	srv, bodies := openAIBodies(t,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Go 1.25 is out."},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"annotations":[{"type":"url_citation","url_citation":{"start_index":0,"end_index":15,"title":"Go 1.25 Release Notes","url":"https://go.dev/doc/go1.25"}}]},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	for _, tc := range []struct {
		model string
		on    bool
		want  bool
	}{
		{"gpt-4o-search-preview", true, true},
		{"gpt-4o-mini-search-preview", true, true},
		{"openai/gpt-5-search-api", true, true},
		{"gpt-4o-search-preview", false, false},
		{"gpt-4o", true, false},
	} {
		cfg := fastConfig()
		cfg.BaseURL, cfg.WebSearch = srv.URL, tc.on
		var log deltaLog
		resp, err := New(cfg).Stream(context.Background(), Request{Model: tc.model, Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "latest Go?"}}}, log.add)
		if err != nil {
			t.Fatal(err)
		}
		all := bodies()
		last := all[len(all)-1]
		if got := strings.Contains(last, `"web_search_options":{}`); got != tc.want {
			t.Errorf("%s (on %v): web_search_options sent %v, want %v: %s", tc.model, tc.on, got, tc.want, last)
		}
		if resp.Message.Content != "Go 1.25 is out." {
			t.Errorf("%s: content = %q", tc.model, resp.Message.Content)
		}
		if got := log.searches(); len(got) != 1 || got[0] != (SearchInfo{Results: 1}) {
			t.Errorf("%s: searches = %+v", tc.model, got)
		}
	}
}

func TestWebSearchFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		protocol, model string
		ok              bool
	}{
		{providers.ProtocolAnthropic, "claude-sonnet-4-5", true},
		{providers.ProtocolOpenAI, "gpt-4o-search-preview", true},
		{providers.ProtocolOpenAI, "gpt-5-search-api", true},
		{providers.ProtocolOpenAI, "gpt-4o", false},
		{providers.ProtocolOpenAI, "gpt-5", false},
		{providers.ProtocolOpenAI, "qwen2.5-coder", false},
		{providers.ProtocolOpenAI, "research-model", false},
	} {
		err := WebSearchFor(tc.protocol, tc.model)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrNoWebSearch)) {
			t.Errorf("WebSearchFor(%q, %q) = %v, want ok %v", tc.protocol, tc.model, err, tc.ok)
		}
	}
}

func TestWebSearchesArePriced(t *testing.T) {
	t.Parallel()
	p := Price{Input: 3, Output: 15}
	base := p.Cost(conversation.Usage{InputTokens: 1000, OutputTokens: 100})
	with := p.Cost(conversation.Usage{InputTokens: 1000, OutputTokens: 100, WebSearches: 2})
	if got := with - base; got < 0.0199 || got > 0.0201 {
		t.Errorf("two searches cost %v, want $0.02", got)
	}
}
