package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
)

// The Messages API's errors as Anthropic sends them.
const (
	overloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	claudeModel    = "claude-sonnet-4-5"
)

// messagesConfig is fastConfig for the Messages API.
func messagesConfig() Config {
	cfg := fastConfig()
	cfg.Protocol = providers.ProtocolAnthropic
	cfg.Provider = "anthropic"
	return cfg
}

// messagesClient points a Messages API client at the stand-in's srv.
func messagesClient(srv *llmtest.Server, cfg Config) *Client {
	cfg.BaseURL = srv.URL
	return New(cfg)
}

func claudeRequest(text string) Request {
	return Request{Model: claudeModel, Messages: []conversation.Message{
		{Role: conversation.RoleSystem, Content: "You are ralph."},
		{Role: conversation.RoleUser, Content: text},
	}}
}

// body decodes a recorded request's JSON.
func body(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("request body %s: %v", raw, err)
	}
	return m
}

// sseServer answers the Messages API with the given streams in turn, each
// a body of SSE text, and records the requests' bodies.
type sseServer struct {
	*httptest.Server
	bodies [][]byte
}

func serveSSE(t *testing.T, streams ...string) *sseServer {
	t.Helper()
	s := &sseServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b json.RawMessage
		_ = json.NewDecoder(r.Body).Decode(&b)
		n := len(s.bodies)
		s.bodies = append(s.bodies, b)
		if r.URL.Path != "/v1/messages" || n >= len(streams) {
			http.Error(w, "unexpected", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(streams[n]))
	}))
	t.Cleanup(s.Close)
	return s
}

// sseClient is a Messages API client of srv.
func sseClient(srv *sseServer) *Client {
	cfg := messagesConfig()
	cfg.BaseURL = srv.URL
	return New(cfg)
}

// events is an SSE body of the payloads, each as Anthropic frames it.
func events(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(p), &ev)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev.Type, p)
	}
	return b.String()
}

func textTurn(text string, usage string) string {
	return events(
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":`+usage+`}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+quote(text)+`}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}`,
		`{"type":"message_stop"}`)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestMessagesOneShot(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "Hello from Claude.", ChunkSize: 5})
	var log deltaLog
	resp, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("say hi"), log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "Hello from Claude." || resp.FinishReason != "stop" {
		t.Errorf("answer = %q (%s)", resp.Message.Content, resp.FinishReason)
	}
	if got := strings.Join(log.texts(), ""); got != "Hello from Claude." || len(log.texts()) < 2 {
		t.Errorf("text deltas = %q", log.texts())
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/messages" {
		t.Fatalf("requests = %+v", reqs)
	}
	h := reqs[0].Header
	if h.Get("X-Api-Key") != testKey || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Authorization") != "" {
		t.Errorf("headers = %v", h)
	}
	b := body(t, reqs[0].Body)
	if b["stream"] != true || b["max_tokens"] != float64(defaultMaxTokens) || b["model"] != claudeModel {
		t.Errorf("body = %v", b)
	}
	sys, _ := b["system"].([]any)
	if len(sys) != 1 || sys[0].(map[string]any)["text"] != "You are ralph." {
		t.Errorf("system = %v", b["system"])
	}
	msgs, _ := b["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Errorf("messages = %v", b["messages"])
	}
	if _, ok := b["thinking"]; ok {
		t.Errorf("thinking sent unasked: %v", b["thinking"])
	}
}

func TestMessagesBearerAndV1Tolerated(t *testing.T) {
	// The stand-in's URL ends in /v1.
	for _, suffix := range []string{"/", "/messages", ""} {
		srv := serveResponses(t, llmtest.Response{Text: "ok"})
		cfg := messagesConfig()
		cfg.Bearer = true
		cfg.BaseURL = srv.URL + suffix
		if _, err := New(cfg).Stream(context.Background(), claudeRequest("hi"), nil); err != nil {
			t.Fatalf("Stream: %v", err)
		}
		r := srv.Requests()[0]
		if r.Path != "/v1/messages" || r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("X-Api-Key") != "" {
			t.Errorf("%q: path %s, headers %v", suffix, r.Path, r.Header)
		}
	}
}

func TestMessagesTwoToolCallsInOneTurn(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "Reading both.", ToolCalls: []llmtest.ToolCall{
		{ID: "toolu_1", Name: "read_file", ArgChunks: []string{`{"path":`, `"a.go"}`}},
		{ID: "toolu_2", Name: "read_file", Arguments: `{"path":"b.go"}`},
	}})
	var log deltaLog
	req := claudeRequest("read a and b")
	req.Tools = []conversation.ToolDef{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	resp, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []conversation.ToolCall{
		{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "toolu_2", Name: "read_file", Arguments: `{"path":"b.go"}`},
	}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) || resp.FinishReason != "tool_calls" || resp.Message.Content != "Reading both." {
		t.Errorf("turn = %+v (%s)", resp.Message, resp.FinishReason)
	}
	if got := log.toolNames(); !reflect.DeepEqual(got, []string{"read_file", "read_file"}) {
		t.Errorf("tool name deltas = %v", got)
	}
	tools := body(t, srv.Requests()[0].Body)["tools"].([]any)
	tool := tools[0].(map[string]any)
	if tool["name"] != "read_file" || tool["input_schema"] == nil || !reflect.DeepEqual(tool["cache_control"], map[string]any{"type": "ephemeral"}) {
		t.Errorf("tool = %v", tool)
	}

	// The results go back in one user message, after the tool-use turn,
	// with a message the person queued meanwhile after them.
	next := req
	next.Messages = append(append([]conversation.Message(nil), req.Messages...), resp.Message,
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "toolu_1", Name: "read_file", Content: "package a"},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "toolu_2", Name: "read_file", Content: "package b"},
		conversation.Message{Role: conversation.RoleUser, Content: "also check c"})
	_, msgs := New(messagesConfig()).messagesOf(next.Messages)
	if len(msgs) != 3 {
		t.Fatalf("messages = %+v", msgs)
	}
	var kinds []string
	for _, b := range msgs[2].Content {
		kinds = append(kinds, b.Type+":"+b.ToolUseID+b.Text)
	}
	if got := strings.Join(kinds, " "); got != "tool_result:toolu_1 tool_result:toolu_2 text:also check c" {
		t.Errorf("the user message after the tool turn = %s", got)
	}
	var uses []string
	for _, b := range msgs[1].Content {
		uses = append(uses, b.Type+":"+b.ID+string(b.Input))
	}
	if got := strings.Join(uses, " "); got != `text: tool_use:toolu_1{"path":"a.go"} tool_use:toolu_2{"path":"b.go"}` {
		t.Errorf("the tool-use turn = %s", got)
	}
}

func TestMessagesInvalidArgumentsGoAsEmptyObject(t *testing.T) {
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "go"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "toolu_9", Name: "bash", Arguments: `{"command": "ls`}}},
		{Role: conversation.RoleTool, ToolCallID: "toolu_9", Content: "invalid arguments"},
	}
	_, wire := New(messagesConfig()).messagesOf(msgs)
	a := wire[1].Content
	if len(a) != 2 || a[0].Type != "text" || !strings.Contains(a[0].Text, "not valid JSON") || !strings.Contains(a[0].Text, `{"command": "ls`) {
		t.Fatalf("assistant blocks = %+v", a)
	}
	if a[1].Type != "tool_use" || string(a[1].Input) != "{}" {
		t.Errorf("tool_use = %+v", a[1])
	}
}

// thinkingStream is a real Messages API stream with extended thinking
// (testdata/LICENSE: from pydantic-ai's test cassettes, MIT). The server
// pads the JSON of its data lines with spaces and sends a ping.
func thinkingStream(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/anthropic_thinking_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMessagesThinkingReplayKeptAndSentBack(t *testing.T) {
	srv := serveSSE(t, thinkingStream(t), textTurn("Done.", `{"input_tokens":10,"output_tokens":1}`))
	cfg := messagesConfig()
	cfg.BaseURL = srv.URL
	cfg.ThinkingTokens = 1024
	cfg.MaxOutputTokens = 1000
	c := New(cfg)
	var log deltaLog
	req := Request{Model: "claude-sonnet-4-0", Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "How do I cross the street?"}}}
	resp, err := c.Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if !strings.HasPrefix(resp.Reasoning, "This is a straightforward question about pedestrian safety.") {
		t.Errorf("reasoning = %q", resp.Reasoning)
	}
	var reasoning []string
	for _, d := range log.all() {
		if d.Reasoning != "" {
			reasoning = append(reasoning, d.Reasoning)
		}
	}
	if len(reasoning) < 5 || strings.Join(reasoning, "") != resp.Reasoning {
		t.Errorf("reasoning deltas = %q", reasoning)
	}
	if !strings.HasPrefix(resp.Message.Content, "Here are the basic steps for safely crossing the street:") || !strings.HasSuffix(resp.Message.Content, "crossing streets.") {
		t.Errorf("content = %q", resp.Message.Content)
	}
	want := conversation.Usage{InputTokens: 43, OutputTokens: 282}
	if resp.Usage != want || resp.FinishReason != "stop" {
		t.Errorf("usage = %+v, finish %s", resp.Usage, resp.FinishReason)
	}
	if len(resp.Message.Opaque) != 1 || resp.Message.Opaque[0].Provider != "anthropic" {
		t.Fatalf("opaque = %+v", resp.Message.Opaque)
	}
	var block struct{ Type, Thinking, Signature string }
	if err := json.Unmarshal(resp.Message.Opaque[0].Block, &block); err != nil || block.Type != "thinking" || block.Thinking != resp.Reasoning || !strings.HasPrefix(block.Signature, "EvMCCkYICxgCKkCHP2c") {
		t.Errorf("thinking block = %s (%v)", resp.Message.Opaque[0].Block, err)
	}
	first := body(t, srv.bodies[0])
	if !reflect.DeepEqual(first["thinking"], map[string]any{"type": "enabled", "budget_tokens": float64(1024)}) || first["max_tokens"] != float64(2024) {
		t.Errorf("thinking %v, max_tokens %v", first["thinking"], first["max_tokens"])
	}

	// The next request carries the block back first in the turn, unchanged.
	req.Messages = append(req.Messages, resp.Message, conversation.Message{Role: conversation.RoleUser, Content: "thanks"})
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("second Stream: %v", err)
	}
	var second struct {
		Messages []struct {
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.bodies[1], &second); err != nil {
		t.Fatal(err)
	}
	if got := string(second.Messages[1].Content[0]); got != string(resp.Message.Opaque[0].Block) {
		t.Errorf("the assistant turn's first block = %s, want the thinking block as kept", got)
	}

	// Another provider's client leaves it out.
	other := messagesConfig()
	other.Provider = "some-proxy"
	_, wire := New(other).messagesOf(req.Messages)
	for _, b := range wire[1].Content {
		if b.raw != nil {
			t.Errorf("a client of another provider sent %s", b.raw)
		}
	}
}

func TestMessagesRedactedThinkingKept(t *testing.T) {
	redacted := `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`
	srv := serveSSE(t, events(
		`{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":`+redacted+`}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`))
	resp, err := sseClient(srv).Stream(context.Background(), claudeRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.Opaque) != 1 || string(resp.Message.Opaque[0].Block) != redacted {
		t.Errorf("opaque = %+v", resp.Message.Opaque)
	}
}

func TestMessagesOverloadedMidStreamIsRetried(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Text: "partial answer that will be void", StreamError: overloadedBody},
		llmtest.Response{Text: "whole answer"},
	)
	var log deltaLog
	resp, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "whole answer" {
		t.Errorf("content = %q", resp.Message.Content)
	}
	r := log.retries()
	if len(r) != 1 || r[0].Reason != "error in the answer: Overloaded" {
		t.Errorf("retries = %+v", r)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("requests = %d", n)
	}
}

func TestMessagesCacheUsage(t *testing.T) {
	srv := serveSSE(t, events(
		`{"type":"message_start","message":{"usage":{"input_tokens":12,"cache_creation_input_tokens":2048,"cache_read_input_tokens":30000,"cache_creation":{"ephemeral_5m_input_tokens":2048,"ephemeral_1h_input_tokens":0},"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"cached"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":40}}`,
		`{"type":"message_stop"}`))
	resp, err := sseClient(srv).Stream(context.Background(), claudeRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := conversation.Usage{InputTokens: 12 + 2048 + 30000, OutputTokens: 40, CacheReadTokens: 30000, CacheWriteTokens: 2048}
	if resp.Usage != want || resp.Message.Content != "cached" {
		t.Errorf("usage = %+v, content %q", resp.Usage, resp.Message.Content)
	}
}

func TestMessagesStopReasons(t *testing.T) {
	for stop, want := range map[string]string{"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length",
		"refusal": "content_filter", "stop_sequence": "stop", "model_context_window_exceeded": "length"} {
		srv := serveSSE(t, events(
			`{"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"x"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"`+stop+`"},"usage":{"output_tokens":2}}`,
			`{"type":"message_stop"}`))
		resp, err := sseClient(srv).Stream(context.Background(), claudeRequest("hi"), nil)
		if err != nil || resp.FinishReason != want {
			t.Errorf("%s: %q, %v; want %q", stop, resp.FinishReason, err, want)
		}
	}
}

func TestMessagesCutStreamIsRetried(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "cut", Truncate: true}, llmtest.Response{Text: "whole"})
	var log deltaLog
	resp, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), log.add)
	if err != nil || resp.Message.Content != "whole" {
		t.Fatalf("Stream: %v %q", err, resp.Message.Content)
	}
	if r := log.retries(); len(r) != 1 || !strings.Contains(r[0].Reason, "message_stop") {
		t.Errorf("retries = %+v", r)
	}
}

func TestMessagesIdleWatchdog(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "hm", Stall: true}, llmtest.Response{Text: "awake"})
	cfg := messagesConfig()
	cfg.IdleTimeout = 300 * time.Millisecond
	cfg.WaitNotice = 100 * time.Millisecond
	resp, err := messagesClient(srv, cfg).Stream(context.Background(), claudeRequest("hi"), nil)
	if err != nil || resp.Message.Content != "awake" {
		t.Fatalf("Stream: %v %q", err, resp.Message.Content)
	}
}

func TestMessagesCancelled(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "slow", Stall: true})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := messagesClient(srv, messagesConfig()).Stream(ctx, claudeRequest("hi"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestMessagesCheckTools(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "ok"})
	cfg := messagesConfig()
	cfg.ThinkingTokens = 4096
	if err := messagesClient(srv, cfg).CheckTools(context.Background(), claudeModel); err != nil {
		t.Fatal(err)
	}
	b := body(t, srv.Requests()[0].Body)
	if _, ok := b["thinking"]; ok || b["max_tokens"] != float64(16) {
		t.Errorf("probe body = %v", b)
	}
}

func TestOpenAICachedTokensAreCacheReads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":2000,"completion_tokens":3,"total_tokens":2003,"prompt_tokens_details":{"cached_tokens":1536}}}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	cfg := fastConfig()
	cfg.BaseURL = srv.URL
	resp, err := New(cfg).Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (conversation.Usage{InputTokens: 2000, OutputTokens: 3, CacheReadTokens: 1536}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}

// pausedTurn is a part of a turn the API paused (pause_turn) or ended.
func pausedTurn(text, stop string) string {
	return events(
		`{"type":"message_start","message":{"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+quote(text)+`}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"`+stop+`"},"usage":{"output_tokens":10}}`,
		`{"type":"message_stop"}`)
}

func TestMessagesPausedTurnGoesOn(t *testing.T) {
	srv := serveSSE(t, pausedTurn("Searching… ", "pause_turn"), pausedTurn("found it.", "end_turn"))
	var log deltaLog
	req := claudeRequest("look it up")
	resp, err := sseClient(srv).Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Searching… found it." || resp.FinishReason != "stop" {
		t.Errorf("turn = %q (%s)", resp.Message.Content, resp.FinishReason)
	}
	if want := (conversation.Usage{InputTokens: 300, OutputTokens: 20, CacheReadTokens: 100}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	if len(log.retries()) != 0 || len(srv.bodies) != 2 {
		t.Fatalf("retries %v, requests %d", log.retries(), len(srv.bodies))
	}
	var second struct {
		Messages []struct {
			Role    string                  `json:"role"`
			Content []struct{ Text string } `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.bodies[1], &second); err != nil {
		t.Fatal(err)
	}
	last := second.Messages[len(second.Messages)-1]
	if len(second.Messages) != 2 || last.Role != "assistant" || last.Content[0].Text != "Searching…" {
		// Without the trailing space, which the API refuses at the end
		// of a last assistant turn.
		t.Errorf("the continuation's messages = %+v", second.Messages)
	}
	if len(req.Messages) != 2 {
		t.Errorf("the caller's request was changed: %+v", req.Messages)
	}

	// Paused again and again, the turn ends as one cut short.
	srv = serveSSE(t, pausedTurn("a", "pause_turn"), pausedTurn("b", "pause_turn"), pausedTurn("c", "pause_turn"), pausedTurn("d", "pause_turn"))
	resp, err = sseClient(srv).Stream(context.Background(), req, nil)
	if err != nil || resp.FinishReason != "length" || resp.Message.Content != "abcd" || len(srv.bodies) != maxPauses+1 {
		t.Errorf("turn = %q (%s), %v, %d requests", resp.Message.Content, resp.FinishReason, err, len(srv.bodies))
	}
}

// TestMessagesMCPStreamReplay replays a real stream (testdata/README.md)
// with thinking and blocks of the API's own tools (mcp_tool_use,
// mcp_tool_result), which ralph does not declare and leaves aside.
func TestMessagesMCPStreamReplay(t *testing.T) {
	b, err := os.ReadFile("testdata/anthropic_mcp_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveSSE(t, string(b))
	var log deltaLog
	resp, err := sseClient(srv).Stream(context.Background(), claudeRequest("Can you tell me more about the pydantic/pydantic-ai repo?"), log.add)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Reasoning, "The user is asking about the pydantic/pydantic-ai repository.") || len(resp.Message.Opaque) == 0 {
		t.Errorf("reasoning = %q, opaque %d", resp.Reasoning, len(resp.Message.Opaque))
	}
	if resp.Message.Content == "" || len(resp.Message.ToolCalls) != 0 || len(log.toolNames()) != 0 || resp.FinishReason != "stop" {
		t.Errorf("turn = %+v (%s), tool names %v", resp.Message, resp.FinishReason, log.toolNames())
	}
	if resp.Usage.InputTokens != 3042 || resp.Usage.OutputTokens != 354 {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestMessagesThinkingTokensCounted(t *testing.T) {
	srv := serveSSE(t, events(
		`{"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"ok"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":300,"output_tokens_details":{"thinking_tokens":261}}}`,
		`{"type":"message_stop"}`))
	resp, err := sseClient(srv).Stream(context.Background(), claudeRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (conversation.Usage{InputTokens: 9, OutputTokens: 300, ReasoningTokens: 261}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}
