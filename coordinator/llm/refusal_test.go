package llm

import (
	"context"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestRefusal checks which failures are a definite refusal of what the
// request carries (the message is set aside) and which the same request
// may get past another time (the message is kept and sent again).
func TestRefusal(t *testing.T) {
	tests := []struct {
		name    string
		resp    llmtest.Response
		loop    bool
		refused bool
		words   string // in the reason, when refused
	}{
		{name: "400", resp: llmtest.Response{Status: 400, Body: `{"error":{"message":"messages[1].content is too long","type":"invalid_request_error"}}`}, refused: true, words: "HTTP 400: messages[1].content is too long"},
		{name: "413", resp: llmtest.Response{Status: 413, Body: `{"error":{"message":"request entity too large"}}`}, refused: true, words: "HTTP 413"},
		{name: "422", resp: llmtest.Response{Status: 422, Body: `{"detail":"unprocessable"}`}, refused: true, words: "HTTP 422"},
		{name: "context length", resp: llmtest.Response{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`}, refused: true, words: "maximum context length"},
		{name: "context length as 500", resp: llmtest.Response{Status: 500, Body: `{"error":{"code":500,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`}, refused: true, words: "available context size"},
		{name: "content filter code", resp: llmtest.Response{Status: 400, Body: `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"code":"content_filter"}}`}, refused: true, words: "content management policy"},
		{name: "content policy 403", resp: llmtest.Response{Status: 403, Body: `{"error":{"message":"Your input was flagged by moderation: content policy","code":"content_policy_violation"}}`}, refused: true, words: "flagged"},
		{name: "500 after retries", resp: llmtest.Response{Status: 500}, loop: true},
		{name: "503", resp: llmtest.Response{Status: 503}, loop: true},
		{name: "429", resp: llmtest.Response{Status: 429}, loop: true},
		{name: "404 with a body", resp: llmtest.Response{Status: 404, Body: `{"error":{"message":"no such thing","type":"x"}}`}},
		{name: "401", resp: llmtest.Response{Status: 401}},
		{name: "broken stream", resp: llmtest.Response{Text: "half", Truncate: true}, loop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, &llmtest.Scenario{Loop: tt.loop, Responses: []llmtest.Response{tt.resp}})
			_, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), nil)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			reason := Refusal(err)
			if (reason != "") != tt.refused {
				t.Fatalf("Refusal(%v) = %q, want refused %v", err, reason, tt.refused)
			}
			if !strings.Contains(reason, tt.words) {
				t.Errorf("reason %q lacks %q", reason, tt.words)
			}
		})
	}
}

// TestRefusalNotOfStopsOrNetworks: a hard stop and a connection that
// cannot be made are no refusal of the message.
func TestRefusalNotOfStopsOrNetworks(t *testing.T) {
	srv := serve(t, &llmtest.Scenario{Responses: []llmtest.Response{{Status: 400}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := clientFor(srv, fastConfig()).Stream(ctx, userRequest("hi"), nil); err == nil || Refusal(err) != "" {
		t.Errorf("a cancelled call: err %v, refusal %q", err, Refusal(err))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := fastConfig()
	cfg.BaseURL = "http://" + addr + "/v1"
	if _, err := New(cfg).Stream(context.Background(), userRequest("hi"), nil); err == nil || Refusal(err) != "" {
		t.Errorf("a refused connection: err %v, refusal %q", err, Refusal(err))
	}
}

// TestSendableSkipsRefused: a refused message is left out of the request,
// so the next message is its own turn; an unmarked one that failed (a 5xx,
// a stop) is merged with the next as before.
func TestSendableSkipsRefused(t *testing.T) {
	in := []conversation.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "too long", Refused: "HTTP 400: too long"},
		{Role: "user", Content: "hello"},
		{Role: "assistant", Content: "hi"},
		{Role: "user", Content: "failed on a 500"},
		{Role: "user", Content: "next"},
	}
	want := []conversation.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "hello"},
		{Role: "assistant", Content: "hi"},
		{Role: "user", Content: "failed on a 500\n\nnext"},
	}
	if got := sendable(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("sendable =\n%+v\nwant\n%+v", got, want)
	}
}

// A context-length refusal's stated window is read from the server's
// words; any other error states none.
func TestStatedWindow(t *testing.T) {
	for msg, want := range map[string]int{
		"the conversation is longer than model \"m\" accepts (HTTP 400: This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.)": 128000,
		"longer than model \"m\" accepts (HTTP 400: prompt is too long: 210000 tokens > 200000 maximum)":                                                                          200000,
		"longer than model \"m\" accepts (HTTP 400: the request exceeds the available context size)":                                                                              0,
	} {
		if got := StatedWindow(&Error{Kind: ErrContextTooLong, Msg: msg}); got != want {
			t.Errorf("StatedWindow(%q) = %d, want %d", msg, got, want)
		}
	}
	if got := StatedWindow(&Error{Kind: ErrBadRequest, Msg: "maximum context length is 4096 tokens"}); got != 0 {
		t.Errorf("a bad request stated a window: %d", got)
	}
}
