package llm

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// fuzzSep separates SSE payloads in one fuzz input.
const fuzzSep = "\x1e"

// FuzzStreamNeverPanics feeds arbitrary server-sent event payloads to the
// client: whatever an endpoint sends, Stream must return a response or an
// *Error, never panic or hang.
//
// The payloads travel inside the request (hex-encoded in the user message)
// so that one fake server can answer every input without shared state.
func FuzzStreamNeverPanics(f *testing.F) {
	seeds := []string{
		`{"id":"a","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}` + fuzzSep +
			`{"id":"a","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + fuzzSep +
			`{"id":"a","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]}}]}` + fuzzSep +
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":-1},{"index":9223372036854775807},{}]},"finish_reason":"x"}]}`,
		`{"error":{"message":"overloaded","type":"server_error","code":529}}`,
		`{"choices":null,"usage":null}`,
		`{not json`,
		"",
		"[DONE]",
		"\n\nevent: ping\n\n: comment",
		`{"choices":[{"delta":{"content":"\u0000\ud800"},"finish_reason":"stop"}]}`,
	}
	for _, s := range seeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		var resp llmtest.Response
		msgs := r.Request.Messages
		if len(msgs) != 2 {
			return llmtest.Response{Status: 400}
		}
		raw, err := hex.DecodeString(msgs[0].Content)
		if err != nil {
			return llmtest.Response{Status: 400}
		}
		resp.Raw = strings.Split(string(raw), fuzzSep)
		resp.Truncate = msgs[1].Content == "truncate"
		return resp
	})
	f.Cleanup(srv.Close)
	cfg := fastConfig()
	cfg.BaseURL = srv.URL
	cfg.MaxAttempts = 1
	cfg.IdleTimeout = 5 * time.Second
	c := New(cfg)

	f.Fuzz(func(t *testing.T, payloads string, truncate bool) {
		flag := "keep"
		if truncate {
			flag = "truncate"
		}
		req := Request{Model: testModel, Messages: []conversation.Message{
			{Role: conversation.RoleUser, Content: hex.EncodeToString([]byte(payloads))},
			{Role: conversation.RoleUser, Content: flag},
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var text strings.Builder
		resp, err := c.Stream(ctx, req, func(d Delta) { text.WriteString(d.Text) })
		if ctx.Err() != nil {
			t.Fatalf("Stream hung on %q", payloads)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("error %v (%T) is not an *llm.Error with a message", err, err)
			}
			return
		}
		// A success must be a complete turn whose text is exactly what was
		// streamed, with every tool call identified.
		if resp.FinishReason == "" || resp.Message.Role != conversation.RoleAssistant {
			t.Fatalf("incomplete response accepted: %+v", resp)
		}
		if resp.Message.Content != text.String() {
			t.Fatalf("content %q differs from streamed text %q", resp.Message.Content, text.String())
		}
		for _, tc := range resp.Message.ToolCalls {
			if tc.ID == "" {
				t.Fatalf("tool call without id: %+v", resp.Message.ToolCalls)
			}
		}
	})
}
