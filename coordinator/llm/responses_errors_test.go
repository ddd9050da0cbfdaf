package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// respFailed is a response.failed event with an error of code.
func respFailed(code, message string) string {
	return `{"type":"response.failed","response":{"id":"resp_1","object":"response","status":"failed","error":{"code":"` + code + `","message":` + quote(message) + `}}}`
}

// TestResponsesInStreamErrors: response.failed and the error event are
// the answer's in-stream error, which the error table reads as it reads
// every server's: a rate limit and a server error are retried, a context
// too long is not.
func TestResponsesInStreamErrors(t *testing.T) {
	good := rsStream(rsStart(), rsMessage(0, "ok"), []string{rsCompleted(rsUsage)})
	for _, c := range []struct {
		name     string
		stream   string
		kind     error
		retried  bool
		config   bool
		fragment string
	}{
		{"failed rate limit", rsStream(rsStart(), []string{respFailed("rate_limit_exceeded", "Rate limit reached for gpt-5-codex on tokens per min (TPM). Please try again in 20ms.")}),
			ErrRateLimited, true, false, "Rate limit reached"},
		{"failed server error", rsStream(rsStart(), rsMessage(0, "half"), []string{respFailed("server_error", "The server had an error processing your request.")}),
			ErrServer, true, false, "server had an error"},
		{"error event", events(`{"type":"error","code":"server_error","message":"An error occurred while processing your request.","param":null,"sequence_number":3}`),
			ErrServer, true, false, "An error occurred"},
		{"error event, nested", events(`{"type":"error","error":{"type":"server_error","code":"overloaded","message":"The engine is currently overloaded."}}`),
			ErrServer, true, false, "overloaded"},
		{"context too long", rsStream(rsStart(), []string{respFailed("context_length_exceeded", "Your input exceeds the context window of this model.")}),
			ErrContextTooLong, false, true, "context window"},
		{"flagged prompt", rsStream(rsStart(), []string{respFailed("invalid_prompt", "Invalid prompt: your prompt was flagged as potentially violating our usage policy.")}),
			ErrContentFiltered, false, false, "flagged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Failing every time: the kind and how often it was tried.
			srv := serveRS(t, c.stream, c.stream, c.stream)
			var log deltaLog
			_, err := rsClient(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), log.add)
			e := wantErrorKind(t, err, c.kind, c.fragment, "inside its answer")
			if e.Config != c.config {
				t.Errorf("Config = %v, want %v", e.Config, c.config)
			}
			want := 1
			if c.retried {
				want = 3
			}
			if n := srv.requests(); n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
			if c.retried {
				// Failing once: the retry answers.
				srv := serveRS(t, c.stream, good)
				resp, err := rsClient(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil)
				if err != nil || resp.Message.Content != "ok" {
					t.Errorf("after one failure: %q, %v", resp.Message.Content, err)
				}
			}
		})
	}
}

// TestResponsesBrokenStream: a stream that ends without a terminal event
// is a broken stream, retried, whether the server cut it or the
// stand-in's answer was truncated.
func TestResponsesBrokenStream(t *testing.T) {
	cut := rsStream(rsStart(), rsMessage(0, "half an ans"))
	srv := serveRS(t, cut, cut, cut)
	_, err := rsClient(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil)
	wantErrorKind(t, err, ErrBrokenStream, "before response.completed", "after 3 attempts")

	sa := serveResponses(t, llmtest.Response{Text: "half an answer", Truncate: true}, llmtest.Response{Text: "whole"})
	resp, err := clientFor(sa, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil)
	if err != nil || resp.Message.Content != "whole" {
		t.Errorf("after a truncated stream: %q, %v", resp.Message.Content, err)
	}
}

// TestResponsesHTTPErrors: an HTTP error goes through the tap like every
// wire's: a 429 with OpenAI's x-ratelimit headers is waited as they say,
// a 500 retried, a 400 refused with the server's words.
func TestResponsesHTTPErrors(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{RateLimit: &llmtest.RateLimit{ResetS: 0.5}}, llmtest.Response{Text: "ok"})
	var log deltaLog
	start := time.Now()
	resp, err := clientFor(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), log.add)
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("Stream: %q, %v", resp.Message.Content, err)
	}
	if r := log.retries(); len(r) != 1 || r[0].Wait < 400*time.Millisecond || time.Since(start) < 400*time.Millisecond {
		t.Errorf("retries = %+v after %s, want the reset's wait", r, time.Since(start))
	}
	if p := srv.Requests()[0].Path; p != "/v1/responses" {
		t.Errorf("path %s", p)
	}

	srv = serveResponses(t, llmtest.Response{RateLimit: &llmtest.RateLimit{ResetS: 120}})
	_, err = clientFor(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil)
	wantErrorKind(t, err, ErrRateLimited, "asked to wait 2m0s")

	srv = serveResponses(t, llmtest.Response{Status: 500}, llmtest.Response{Text: "ok"})
	if _, err := clientFor(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil); err != nil {
		t.Errorf("a 500 then an answer: %v", err)
	}

	srv = serveResponses(t, llmtest.Response{Status: 400, Body: `{"error":{"message":"Invalid type for 'input[2].output': expected a string.","type":"invalid_request_error","param":"input[2].output","code":"invalid_type"}}`})
	_, err = clientFor(srv, responsesConfig()).Stream(context.Background(), codexRequest("hi"), nil)
	if e := wantErrorKind(t, err, ErrBadRequest, "HTTP 400", "expected a string"); e.Refusal == "" {
		t.Errorf("a 400 is no refusal: %+v", e)
	}
}

// chatOnly404 is OpenAI's answer on chat completions for a model it
// serves only on the Responses API.
const chatOnly404 = `{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error","param":"model","code":null}}`

// TestResponsesOnlyModelMoves: a model chat completions refuses as served
// only on the Responses API goes there at once (no retry counted), the
// person is told once, in one line, and every later request for it goes
// there directly; other models stay on chat completions.
func TestResponsesOnlyModelMoves(t *testing.T) {
	const model = "gpt-9-pro" // no table knows it: only the refusal can tell
	srv := serveResponses(t,
		llmtest.Response{Status: 404, Body: chatOnly404},
		llmtest.Response{Text: "from responses"},
		llmtest.Response{Text: "again"},
		llmtest.Response{Text: "chat still"},
	)
	c := clientFor(srv, fastConfig())
	req := userRequest("hi")
	req.Model = model
	var log deltaLog
	resp, err := c.Stream(context.Background(), req, log.add)
	if err != nil || resp.Message.Content != "from responses" {
		t.Fatalf("Stream: %q, %v", resp.Message.Content, err)
	}
	if _, err := c.Stream(context.Background(), req, log.add); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(context.Background(), userRequest("hi"), log.add); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Path)
	}
	if strings.Join(paths, " ") != "/v1/chat/completions /v1/responses /v1/responses /v1/chat/completions" {
		t.Errorf("paths = %q", paths)
	}
	var notices []string
	for _, d := range log.all() {
		if d.Notice != "" {
			notices = append(notices, d.Notice)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], model+" is served only on OpenAI's Responses API") ||
		!strings.Contains(notices[0], `wire = "responses"`) || strings.Contains(notices[0], "\n") {
		t.Errorf("notices = %q", notices)
	}
	if r := log.retries(); len(r) != 0 {
		t.Errorf("the move counted as a retry: %+v", r)
	}
}

// TestResponsesOnlyModelHeldToChat: with wire = "chat" no model moves,
// and the sentence says how to let it.
func TestResponsesOnlyModelHeldToChat(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Status: 404, Body: chatOnly404}, llmtest.Response{Text: "never"})
	cfg := fastConfig()
	cfg.Wire = "chat"
	req := userRequest("hi")
	req.Model = codexModel
	var log deltaLog
	_, err := clientFor(srv, cfg).Stream(context.Background(), req, log.add)
	e := wantErrorKind(t, err, ErrModelNotFound, `"gpt-5-codex"`, "served only on OpenAI's Responses API", `wire = "responses"`, `wire = "chat"`, "HTTP 404")
	if !e.Config || e.Refusal != "" {
		t.Errorf("Config %v, Refusal %q", e.Config, e.Refusal)
	}
	if n := len(srv.Requests()); n != 1 || srv.Requests()[0].Path != "/v1/chat/completions" {
		t.Errorf("requests = %+v", srv.Requests())
	}
	for _, d := range log.all() {
		if d.Notice != "" {
			t.Errorf("a notice with wire = \"chat\": %q", d.Notice)
		}
	}
	// The sentence names the fix whatever the wire: on auto too.
	f := &failure{status: 404, server: parseErrorBody([]byte(chatOnly404))}
	err = New(fastConfig()).classify(context.Background(), f, "gpt-9-pro", 1)
	wantErrorKind(t, err, ErrModelNotFound, `set wire = "responses" in the config`)
}

// TestResponsesUnverifiedReasoningLeftOut: reasoning the endpoint cannot
// verify (minted by another backend) is left out at once, without a
// retry counted, and from then on; the conversation keeps it.
func TestResponsesUnverifiedReasoningLeftOut(t *testing.T) {
	const refusal = `{"error":{"message":"The encrypted content gAAA...ckend could not be verified.","type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}`
	var (
		mu     sync.Mutex
		bodies []string
	)
	first := rsStream(rsStart(), rsReasoning(0, "rs_1", "plan", "gAAAA-other-backend"), rsCall(1, "call_1", "bash", `{}`), []string{rsCompleted(rsUsage)})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, string(b))
		mu.Unlock()
		switch {
		case n == 0:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, first)
		case strings.Contains(string(b), "other-backend"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, refusal)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, rsStream(rsStart(), rsMessage(0, "ok"), []string{rsCompleted(rsUsage)}))
		}
	}))
	t.Cleanup(srv.Close)
	cfg := responsesConfig()
	cfg.BaseURL = srv.URL + "/v1"
	c := New(cfg)
	req := codexRequest("go")
	resp, err := c.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, resp.Message, conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "bash", Content: "ok"})
	var log deltaLog
	for range 2 {
		if resp, err := c.Stream(context.Background(), req, log.add); err != nil || resp.Message.Content != "ok" {
			t.Fatalf("Stream: %q, %v", resp.Message.Content, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 4 || strings.Contains(bodies[3], "other-backend") || !strings.Contains(bodies[3], `"function_call"`) {
		t.Errorf("%d requests; the last: %s", len(bodies), bodies[len(bodies)-1])
	}
	if r := log.retries(); len(r) != 0 {
		t.Errorf("leaving the reasoning out counted as a retry: %+v", r)
	}
	if len(req.Messages[2].Opaque) != 1 {
		t.Errorf("the conversation lost its reasoning")
	}
}

// TestResponsesSummaryRefusedIsLeftOut: an organisation OpenAI has not
// verified is refused reasoning summaries; the request goes again at
// once without one, and so does every later one.
func TestResponsesSummaryRefusedIsLeftOut(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Status: 400, Body: `{"error":{"message":"Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization.","type":"invalid_request_error","param":"reasoning.summary","code":"unsupported_value"}}`},
		llmtest.Response{Text: "ok"}, llmtest.Response{Text: "again"})
	c := clientFor(srv, responsesConfig())
	var log deltaLog
	for range 2 {
		if _, err := c.Stream(context.Background(), codexRequest("hi"), log.add); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || len(log.retries()) != 0 {
		t.Fatalf("%d requests, retries %+v", len(reqs), log.retries())
	}
	for i, r := range reqs {
		b := body(t, r.Body)
		if has := b["reasoning"] != nil; has != (i == 0) {
			t.Errorf("request %d: reasoning %v", i, b["reasoning"])
		}
		if b["include"] == nil {
			t.Errorf("request %d asks for no encrypted reasoning", i)
		}
	}
}
