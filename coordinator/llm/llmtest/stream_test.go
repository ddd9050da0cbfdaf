package llmtest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestStreamTextReassembles(t *testing.T) {
	text := "Héllo wörld, this is a streamed answer ✓"
	srv := NewServer(&Scenario{Name: "text", Responses: []Response{{Text: text, ChunkSize: 3}}})
	defer srv.Close()

	got := streamOnce(t, newClient(srv, "k"), userRequest("fake-model", "hi"))
	if got.recvError != nil {
		t.Fatalf("stream error: %v", got.recvError)
	}
	if got.content != text {
		t.Errorf("content = %q, want %q", got.content, text)
	}
	if got.finish != openai.FinishReasonStop {
		t.Errorf("finish = %q, want stop", got.finish)
	}
	// Role chunk + ceil(runes/3) content chunks + finish chunk.
	if want := 1 + (len([]rune(text))+2)/3 + 1; got.chunks != want {
		t.Errorf("chunks = %d, want %d", got.chunks, want)
	}
	if len(got.ids) != 1 {
		t.Errorf("chunk ids = %v, want one id for the whole stream", got.ids)
	}
	if got.usage != nil {
		t.Errorf("usage sent without include_usage: %+v", got.usage)
	}
}

func TestStreamExplicitTextChunks(t *testing.T) {
	srv := NewServer(&Scenario{Name: "chunks", Responses: []Response{{Text: "ignored", TextChunks: []string{"a", "bc", "def"}}}})
	defer srv.Close()
	got := streamOnce(t, newClient(srv, "k"), userRequest("m", "hi"))
	if got.content != "abcdef" || got.chunks != 5 {
		t.Errorf("content %q in %d chunks, want abcdef in 5", got.content, got.chunks)
	}
}

func TestStreamToolCallsReassembleByIndex(t *testing.T) {
	calls := []ToolCall{
		{Name: "write_file", Arguments: `{"path":"a.txt","content":"alpha\n"}`},
		{ID: "call_custom", Name: "write_file", Arguments: `{"path":"b.txt","content":"beta"}`, ArgChunks: []string{`{"path":"b.txt",`, `"content":"beta"}`}},
		{Name: "read_file", Arguments: `{"path":"a.txt"}`},
	}
	for _, interleave := range []bool{false, true} {
		srv := NewServer(&Scenario{Name: "tools", Responses: []Response{{Text: "Doing it.", ToolCalls: calls, InterleaveToolCalls: interleave}}})
		got := streamOnce(t, newClient(srv, "k"), userRequest("m", "go"))
		srv.Close()

		if got.content != "Doing it." {
			t.Errorf("interleave=%v: content = %q", interleave, got.content)
		}
		if got.finish != openai.FinishReasonToolCalls {
			t.Errorf("interleave=%v: finish = %q, want tool_calls", interleave, got.finish)
		}
		if len(got.calls) != len(calls) {
			t.Fatalf("interleave=%v: got %d calls, want %d", interleave, len(got.calls), len(calls))
		}
		for i, want := range calls {
			c := got.calls[i]
			if c.Function.Name != want.Name || c.Function.Arguments != want.Arguments || c.Type != openai.ToolTypeFunction {
				t.Errorf("interleave=%v: call %d = %+v, want %s %s", interleave, i, c, want.Name, want.Arguments)
			}
		}
		if got.calls[1].ID != "call_custom" || got.calls[0].ID == "" || got.calls[0].ID == got.calls[2].ID {
			t.Errorf("interleave=%v: ids %q %q %q, want custom id kept and unique defaults", interleave, got.calls[0].ID, got.calls[1].ID, got.calls[2].ID)
		}
	}
}

func TestToolCallDeltaOrder(t *testing.T) {
	calls := []ToolCall{{ID: "a", Name: "x", ArgChunks: []string{"1", "2"}}, {ID: "b", Name: "y", ArgChunks: []string{"3"}}}
	var seq, inter []string
	for _, d := range toolCallDeltas(calls, false) {
		seq = append(seq, d.ID+d.Function.Arguments)
	}
	for _, d := range toolCallDeltas(calls, true) {
		inter = append(inter, d.ID+d.Function.Arguments)
	}
	if got := strings.Join(seq, ","); got != "a,1,2,b,3" {
		t.Errorf("sequential order = %s", got)
	}
	if got := strings.Join(inter, ","); got != "a,b,1,3,2" {
		t.Errorf("interleaved order = %s", got)
	}
}

func TestStreamUsageWithIncludeUsage(t *testing.T) {
	srv := NewServer(&Scenario{Name: "usage", Responses: []Response{
		{Text: "twelve chars"},
		{Text: "scripted", Usage: &Usage{PromptTokens: 100, CompletionTokens: 7}},
	}})
	defer srv.Close()
	client := newClient(srv, "k")
	req := userRequest("m", "hi")
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}

	got := streamOnce(t, client, req)
	if got.usage == nil {
		t.Fatal("no usage chunk with include_usage")
	}
	if got.usage.CompletionTokens != 3 || got.usage.PromptTokens < 1 ||
		got.usage.TotalTokens != got.usage.PromptTokens+got.usage.CompletionTokens {
		t.Errorf("default usage = %+v, want completion 3 and a consistent total", got.usage)
	}

	got = streamOnce(t, client, req)
	if got.usage == nil || got.usage.PromptTokens != 100 || got.usage.CompletionTokens != 7 || got.usage.TotalTokens != 107 {
		t.Errorf("scripted usage = %+v, want 100+7", got.usage)
	}
}

func TestStreamTruncatedHasNoFinishReason(t *testing.T) {
	srv := NewServer(&Scenario{Name: "trunc", Responses: []Response{{Text: "partial answer", Truncate: true}, {Text: "partial", Truncate: true}}})
	defer srv.Close()
	req := userRequest("m", "hi")
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}

	got := streamOnce(t, newClient(srv, "k"), req)
	if got.content != "partial answer" {
		t.Errorf("content = %q", got.content)
	}
	if got.finish != "" || got.usage != nil {
		t.Errorf("truncated stream sent finish %q / usage %+v", got.finish, got.usage)
	}

	// go-openai reports a missing [DONE] as plain io.EOF, so check the raw
	// bytes too.
	req.Stream = true
	raw := postRaw(t, srv, req)
	if strings.Contains(raw, "[DONE]") || strings.Contains(raw, "finish_reason\":\"") {
		t.Errorf("truncated stream body has an ending:\n%s", raw)
	}
}

func TestStreamWireFormat(t *testing.T) {
	srv := NewServer(&Scenario{Name: "wire", Responses: []Response{{Text: "hi", ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: "{}"}}}}})
	defer srv.Close()
	req := userRequest("m", "hi")
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	raw := postRaw(t, srv, req)

	var events []string
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			if !strings.HasPrefix(line, "data: ") {
				t.Fatalf("line without data prefix: %q", line)
			}
			events = append(events, strings.TrimPrefix(line, "data: "))
		}
	}
	if !strings.HasSuffix(raw, "data: [DONE]\n\n") {
		t.Errorf("stream does not end with [DONE]:\n%s", raw)
	}
	wantParts := []string{
		`"delta":{"role":"assistant","content":""},"finish_reason":null`,
		`"delta":{"content":"hi"}`,
		`"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]`,
		`"tool_calls":[{"index":0,"function":{"arguments":"{"}}]`,
		`"delta":{},"finish_reason":"tool_calls"`,
		`"choices":[],"usage":{"prompt_tokens":`,
		`[DONE]`,
	}
	for _, part := range wantParts {
		if !strings.Contains(raw, part) {
			t.Errorf("stream lacks %s:\n%s", part, raw)
		}
	}
	if !strings.Contains(events[0], `"object":"chat.completion.chunk"`) {
		t.Errorf("first event is not a chunk: %s", events[0])
	}
}

func TestStreamRawPayloads(t *testing.T) {
	srv := NewServer(&Scenario{Name: "raw", Responses: []Response{{Raw: []string{
		`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"raw "}}]}`,
		`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"text"},"finish_reason":"length"}]}`,
	}}}})
	defer srv.Close()
	got := streamOnce(t, newClient(srv, "k"), userRequest("m", "hi"))
	if got.content != "raw text" || got.finish != openai.FinishReasonLength || got.chunks != 2 {
		t.Errorf("raw stream = %+v", got)
	}
}

func TestChunkDelayStopsWhenClientCancels(t *testing.T) {
	srv := NewServer(&Scenario{Name: "slow", Responses: []Response{{Text: strings.Repeat("slow ", 100), ChunkSize: 5, ChunkDelayMS: 2000}}})
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := newClient(srv, "k").CreateChatCompletionStream(ctx, userRequest("m", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	// The handler is now waiting before the first chunk.
	if srv.Active() != 1 {
		t.Fatalf("Active = %d, want 1", srv.Active())
	}
	cancelled := time.Now()
	cancel()

	var returned time.Duration
	for srv.Active() != 0 {
		if time.Since(cancelled) > 2*time.Second {
			t.Fatal("handler still running 2s after the client cancelled")
		}
		time.Sleep(time.Millisecond)
	}
	// The handler notices within milliseconds; the loop's 2 s bound,
	// the chunk delay, is what a handler that does not notice would take,
	// and a loaded machine running -race stays well inside it.
	returned = time.Since(cancelled)
	t.Logf("handler returned %v after cancel", returned)
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Cancelled {
		t.Errorf("request not recorded as cancelled: %+v", reqs)
	}
	if reqs[0].Served >= 2*time.Second {
		t.Errorf("Served = %v, want well below the chunk delay", reqs[0].Served)
	}
}

func TestChunkDelayIsApplied(t *testing.T) {
	srv := NewServer(&Scenario{Name: "delay", Responses: []Response{{Text: "abcd", ChunkSize: 1, DelayMS: 30, ChunkDelayMS: 10}}})
	defer srv.Close()
	start := time.Now()
	got := streamOnce(t, newClient(srv, "k"), userRequest("m", "hi"))
	// 30ms before headers, then 10ms before each of 7 events (role, 4
	// content, finish, [DONE]).
	if elapsed := time.Since(start); elapsed < 100*time.Millisecond || got.content != "abcd" {
		t.Errorf("took %v for %q, want at least 100ms", elapsed, got.content)
	}
	if st := srv.ServerTime(); st < 100*time.Millisecond {
		t.Errorf("ServerTime = %v, want at least 100ms", st)
	}
}

// postRaw sends req with plain net/http and returns the whole body.
func postRaw(t *testing.T, srv *Server, req openai.ChatCompletionRequest) string {
	t.Helper()
	body, err := jsonBody(req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); req.Stream && ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
