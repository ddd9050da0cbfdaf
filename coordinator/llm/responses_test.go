package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// codexModel is a model OpenAI serves only on the Responses API, and a
// reasoning one.
const codexModel = "gpt-5-codex"

// responsesConfig is fastConfig for OpenAI's protocol with every request
// on the Responses API.
func responsesConfig() Config {
	cfg := fastConfig()
	cfg.Provider = "openai"
	cfg.Wire = "responses"
	return cfg
}

func codexRequest(text string) Request {
	return Request{Model: codexModel, Messages: []conversation.Message{
		{Role: conversation.RoleSystem, Content: "You are ralph."},
		{Role: conversation.RoleUser, Content: text},
	}}
}

// rsServer answers POST /v1/responses with the given SSE bodies in turn
// and records the requests' bodies.
type rsServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func serveRS(t *testing.T, streams ...string) *rsServer {
	t.Helper()
	s := &rsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b json.RawMessage
		_ = json.NewDecoder(r.Body).Decode(&b)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, b)
		s.mu.Unlock()
		if r.URL.Path != "/v1/responses" || n >= len(streams) {
			http.Error(w, "unexpected", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(streams[n]))
	}))
	t.Cleanup(s.Close)
	return s
}

// body is the i-th request's body.
func (s *rsServer) body(i int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

func (s *rsServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// rsClient is a Responses API client of srv.
func rsClient(srv *rsServer, cfg Config) *Client {
	cfg.BaseURL = srv.URL + "/v1"
	return New(cfg)
}

// The pieces of a stream, as OpenAI sends them (sequence numbers left
// out: ralph does not read them).
func rsStart() []string {
	return []string{`{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.in_progress","response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`}
}

func rsReasoning(i int, id, summary, encrypted string) []string {
	at := `"output_index":` + itoa(i)
	return []string{
		`{"type":"response.output_item.added",` + at + `,"item":{"id":"` + id + `","type":"reasoning","summary":[]}}`,
		`{"type":"response.reasoning_summary_part.added","item_id":"` + id + `",` + at + `,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
		`{"type":"response.reasoning_summary_text.delta","item_id":"` + id + `",` + at + `,"summary_index":0,"delta":` + quote(summary) + `}`,
		`{"type":"response.reasoning_summary_text.done","item_id":"` + id + `",` + at + `,"summary_index":0,"text":` + quote(summary) + `}`,
		`{"type":"response.output_item.done",` + at + `,"item":{"id":"` + id + `","type":"reasoning","summary":[{"type":"summary_text","text":` + quote(summary) + `}],"encrypted_content":"` + encrypted + `"}}`,
	}
}

func rsCall(i int, callID, name, args string) []string {
	at := `"output_index":` + itoa(i)
	id := "fc_" + callID
	half := len(args) / 2
	return []string{
		`{"type":"response.output_item.added",` + at + `,"item":{"id":"` + id + `","type":"function_call","status":"in_progress","arguments":"","call_id":"` + callID + `","name":"` + name + `"}}`,
		`{"type":"response.function_call_arguments.delta","item_id":"` + id + `",` + at + `,"delta":` + quote(args[:half]) + `}`,
		`{"type":"response.function_call_arguments.delta","item_id":"` + id + `",` + at + `,"delta":` + quote(args[half:]) + `}`,
		`{"type":"response.function_call_arguments.done","item_id":"` + id + `",` + at + `,"arguments":` + quote(args) + `}`,
		`{"type":"response.output_item.done",` + at + `,"item":{"id":"` + id + `","type":"function_call","status":"completed","arguments":` + quote(args) + `,"call_id":"` + callID + `","name":"` + name + `"}}`,
	}
}

func rsMessage(i int, chunks ...string) []string {
	at := `"output_index":` + itoa(i)
	text := strings.Join(chunks, "")
	out := []string{
		`{"type":"response.output_item.added",` + at + `,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.content_part.added","item_id":"msg_1",` + at + `,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}`,
	}
	for _, c := range chunks {
		out = append(out, `{"type":"response.output_text.delta","item_id":"msg_1",`+at+`,"content_index":0,"delta":`+quote(c)+`}`)
	}
	return append(out,
		`{"type":"response.output_text.done","item_id":"msg_1",`+at+`,"content_index":0,"text":`+quote(text)+`}`,
		`{"type":"response.output_item.done",`+at+`,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":`+quote(text)+`}]}}`)
}

const rsUsage = `{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":128},"total_tokens":1500}`

func rsCompleted(usage string) string {
	return `{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","usage":` + usage + `}}`
}

// rsStream is an SSE body of the parts, in order.
func rsStream(parts ...[]string) string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return events(all...)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// inputOf is a request body's input items, decoded.
func inputOf(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var b struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("request body %s: %v", raw, err)
	}
	return b.Input
}

// itemTypes is the type of each item, a message's as type:role.
func itemTypes(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		s, _ := it["type"].(string)
		if r, ok := it["role"].(string); ok {
			s += ":" + r
		}
		out = append(out, s)
	}
	return out
}

// TestResponsesTextTurn: a streamed text answer from the stand-in's
// Responses API, and the request codex's recordings show.
func TestResponsesTextTurn(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "Hello from codex.", ChunkSize: 5})
	var log deltaLog
	cfg := responsesConfig()
	cfg.MaxOutputTokens = 4096
	req := codexRequest("say hi")
	req.CacheKey = "session-1"
	resp, err := clientFor(srv, cfg).Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "Hello from codex." || resp.FinishReason != "stop" || resp.Usage.Estimated {
		t.Errorf("answer = %q (%s), usage %+v", resp.Message.Content, resp.FinishReason, resp.Usage)
	}
	if got := log.texts(); strings.Join(got, "") != "Hello from codex." || len(got) < 2 {
		t.Errorf("text deltas = %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/responses" {
		t.Fatalf("requests = %+v", reqs)
	}
	if h := reqs[0].Header; h.Get("Authorization") != "Bearer "+testKey || h.Get("Accept") != "text/event-stream" {
		t.Errorf("headers = %v", h)
	}
	b := body(t, reqs[0].Body)
	want := map[string]any{
		"model": codexModel, "instructions": "You are ralph.", "store": false, "stream": true,
		"reasoning": map[string]any{"summary": "auto"}, "include": []any{"reasoning.encrypted_content"},
		"prompt_cache_key": "session-1", "max_output_tokens": float64(4096),
		"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "say hi"}}}},
	}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("body = %v\nwant   %v", b, want)
	}
	// A model that does not reason is asked for no reasoning.
	srv = serveResponses(t, llmtest.Response{Text: "ok"})
	req.Model = "gpt-4.1"
	if _, err := clientFor(srv, cfg).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if b := body(t, srv.Requests()[0].Body); b["reasoning"] != nil || b["include"] != nil {
		t.Errorf("gpt-4.1 was asked for reasoning: %v", b)
	}
}

// TestResponsesFunctionCalls: two function calls of one answer, each
// announced by name, assembled with their call_ids.
func TestResponsesFunctionCalls(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "Looking.", ToolCalls: []llmtest.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_b", Name: "bash", Arguments: `{"command":"go test ./..."}`},
	}})
	var log deltaLog
	req := codexRequest("fix it")
	req.Tools = []conversation.ToolDef{
		{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "bash", Description: "Runs a command."},
	}
	resp, err := clientFor(srv, responsesConfig()).Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []conversation.ToolCall{{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`}, {ID: "call_b", Name: "bash", Arguments: `{"command":"go test ./..."}`}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) || resp.FinishReason != "tool_calls" || resp.Message.Content != "Looking." {
		t.Errorf("answer = %+v (%s)", resp.Message, resp.FinishReason)
	}
	if got := log.toolNames(); !reflect.DeepEqual(got, []string{"read_file", "bash"}) {
		t.Errorf("tool names = %q", got)
	}
	var b struct {
		Tools             json.RawMessage `json:"tools"`
		ToolChoice        string          `json:"tool_choice"`
		ParallelToolCalls bool            `json:"parallel_tool_calls"`
	}
	_ = json.Unmarshal(srv.Requests()[0].Body, &b)
	wantTools := `[{"type":"function","name":"read_file","description":"Reads a file.","strict":false,"parameters":{"type":"object","properties":{"path":{"type":"string"}}}},` +
		`{"type":"function","name":"bash","description":"Runs a command.","strict":false,"parameters":{"type":"object","properties":{}}}]`
	if string(b.Tools) != wantTools || b.ToolChoice != "auto" || !b.ParallelToolCalls {
		t.Errorf("tools = %s, tool_choice %q, parallel %v", b.Tools, b.ToolChoice, b.ParallelToolCalls)
	}
}

// TestResponsesReasoningCarried: a turn of two calls, each after a
// reasoning item, keeps both items; the next request gives each back,
// its encrypted content byte for byte and without its id, right before
// its call, then the calls' outputs.
func TestResponsesReasoningCarried(t *testing.T) {
	const enc1, enc2 = "gAAAAB-first_reasoning==", "gAAAAB-second/reasoning+=="
	srv := serveRS(t,
		rsStream(rsStart(), rsReasoning(0, "rs_1", "**Plan** read a.go", enc1), rsCall(1, "call_1", "read_file", `{"path":"a.go"}`),
			rsReasoning(2, "rs_2", "then test", enc2), rsCall(3, "call_2", "bash", `{"command":"go test"}`), []string{rsCompleted(rsUsage)}),
		rsStream(rsStart(), rsMessage(0, "Fixed", "."), []string{rsCompleted(rsUsage)}))
	c := rsClient(srv, responsesConfig())
	var log deltaLog
	req := codexRequest("fix a.go")
	resp, err := c.Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Reasoning != "**Plan** read a.go\n\nthen test" || resp.FinishReason != "tool_calls" || len(resp.Message.ToolCalls) != 2 {
		t.Errorf("answer = %+v, reasoning %q (%s)", resp.Message, resp.Reasoning, resp.FinishReason)
	}
	var shown []string
	for _, d := range log.all() {
		if d.Reasoning != "" {
			shown = append(shown, d.Reasoning)
		}
	}
	if !reflect.DeepEqual(shown, []string{"**Plan** read a.go", "then test"}) {
		t.Errorf("reasoning deltas = %q", shown)
	}
	if len(resp.Message.Opaque) != 2 || resp.Message.Opaque[0].Provider != "openai" {
		t.Fatalf("opaque = %+v", resp.Message.Opaque)
	}
	wantBlock := `{"before":"call_1","model":"gpt-5-codex","reasoning":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan** read a.go"}],"encrypted_content":"` + enc1 + `"}}`
	if got := string(resp.Message.Opaque[0].Block); got != wantBlock {
		t.Errorf("block = %s\nwant    %s", got, wantBlock)
	}

	req.Messages = append(req.Messages, resp.Message,
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "read_file", Content: "package a"},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_2", Name: "bash", Content: "ok"})
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("second Stream: %v", err)
	}
	items := inputOf(t, srv.body(1))
	wantTypes := []string{"message:user", "reasoning", "function_call", "reasoning", "function_call", "function_call_output", "function_call_output"}
	if got := itemTypes(items); !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("input items = %q, want %q", got, wantTypes)
	}
	if items[1]["encrypted_content"] != enc1 || items[3]["encrypted_content"] != enc2 || items[2]["call_id"] != "call_1" || items[4]["call_id"] != "call_2" {
		t.Errorf("reasoning or calls out of order: %v", items)
	}
	for _, it := range items {
		if _, ok := it["id"]; ok {
			t.Errorf("an item carries an id: %v", it)
		}
	}
	raw := string(srv.body(1))
	for _, want := range []string{`"encrypted_content":"` + enc1 + `"`, `"encrypted_content":"` + enc2 + `"`,
		`{"type":"function_call_output","call_id":"call_1","output":"package a"}`} {
		if !strings.Contains(raw, want) {
			t.Errorf("the second request lacks %s:\n%s", want, raw)
		}
	}
	// Another model is not given the reasoning another minted.
	req.Model = "gpt-5.1-codex"
	data, err := responsesBody(c, req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), enc1) {
		t.Errorf("gpt-5.1-codex is given gpt-5-codex's reasoning")
	}
}

// TestResponsesUsage: the usage of response.completed, its cached tokens
// read from the prompt cache and its reasoning tokens, in ralph's terms.
func TestResponsesUsage(t *testing.T) {
	srv := serveRS(t, rsStream(rsStart(), rsMessage(0, "hi"), []string{rsCompleted(rsUsage)}))
	resp, err := rsClient(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := conversation.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 1024, ReasoningTokens: 128}
	if resp.Usage != want || resp.read != 1200 {
		t.Errorf("usage = %+v (read %d), want %+v", resp.Usage, resp.read, want)
	}
}

// TestResponsesFinishReasons: an incomplete answer cut at the output
// limit is "length", one stopped by the content filter or a refusal
// "content_filter", as the other wires map theirs.
func TestResponsesFinishReasons(t *testing.T) {
	incomplete := func(reason string) string {
		return `{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"` + reason + `"},"usage":` + rsUsage + `}}`
	}
	refusal := []string{`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
		`{"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"I can't help with that."}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}}`}
	for _, c := range []struct {
		name, stream, want string
	}{
		{"max_output_tokens", rsStream(rsStart(), rsMessage(0, "half"), []string{incomplete("max_output_tokens")}), "length"},
		{"content_filter", rsStream(rsStart(), rsMessage(0, "half"), []string{incomplete("content_filter")}), "content_filter"},
		{"refusal", rsStream(rsStart(), refusal, []string{rsCompleted(rsUsage)}), "content_filter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := serveRS(t, c.stream)
			resp, err := rsClient(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != c.want || resp.Message.Content == "" {
				t.Errorf("finish = %q, text %q, want %q", resp.FinishReason, resp.Message.Content, c.want)
			}
		})
	}
}

// TestResponsesWebSearch: the API's own web_search is offered to a GPT-5
// model when the person switched it on, and a web_search_call is shown,
// never run.
func TestResponsesWebSearch(t *testing.T) {
	search := []string{`{"type":"response.output_item.added","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"in_progress"}}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"go 1.26 release notes","sources":[{"type":"url","url":"https://go.dev/doc/go1.26"}]}}}`}
	srv := serveRS(t, rsStream(rsStart(), search, rsMessage(1, "Go 1.26 is out."), []string{rsCompleted(rsUsage)}))
	cfg := responsesConfig()
	cfg.WebSearch = true
	var log deltaLog
	resp, err := rsClient(srv, cfg).Stream(context.Background(), codexRequest("what's new in go?"), log.add)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.searches(); len(got) != 1 || got[0].Query != "go 1.26 release notes" || got[0].Results != 1 {
		t.Errorf("searches = %+v", got)
	}
	if len(resp.Message.ToolCalls) != 0 || resp.Message.Content != "Go 1.26 is out." {
		t.Errorf("answer = %+v", resp.Message)
	}
	b := string(srv.body(0))
	if !strings.Contains(b, `{"type":"web_search"}`) || !strings.Contains(b, `"web_search_call.action.sources"`) {
		t.Errorf("the request offers no web_search: %s", b)
	}
	if WebSearchWith(Config{Wire: "responses"}, "codex-mini-latest") == nil || WebSearchWith(Config{}, "gpt-5") != nil || WebSearchWith(Config{BaseURL: "http://127.0.0.1:1/v1"}, "gpt-5") == nil {
		t.Errorf("WebSearchWith does not follow the API each model is served on")
	}
}

// TestResponsesImages: a person's image goes with their text, and a tool
// result's images in a user message after the turn's outputs.
func TestResponsesImages(t *testing.T) {
	img := conversation.NewImage("shot.png", "image/png", []byte("\x89PNG fake"), 1, 1)
	req := Request{Model: codexModel, Messages: []conversation.Message{
		{Role: conversation.RoleUser, Content: "look", Images: []conversation.Image{img}},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "call_1", Name: "view_image", Arguments: `{"path":"shot.png"}`}}},
		{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "view_image", Content: "shown", Images: []conversation.Image{img}},
		{Role: conversation.RoleAssistant, Content: "A red square."},
	}}
	data, err := responsesBody(New(responsesConfig()), req)
	if err != nil {
		t.Fatal(err)
	}
	items := inputOf(t, data)
	want := []string{"message:user", "function_call", "function_call_output", "message:user", "message:assistant"}
	if got := itemTypes(items); !reflect.DeepEqual(got, want) {
		t.Fatalf("items = %q, want %q", got, want)
	}
	url := dataURL(img)
	first, _ := json.Marshal(items[0]["content"])
	after, _ := json.Marshal(items[3]["content"])
	if !strings.Contains(string(first), url) || !strings.Contains(string(after), url) || !strings.Contains(string(after), "The image shot.png (from the view_image call above)") {
		t.Errorf("images misplaced: %s / %s", first, after)
	}
}
