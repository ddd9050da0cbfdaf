package llm

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
	openai "github.com/sashabaranov/go-openai"
)

// testKey is the API key every test client sends unless a test says otherwise.
const testKey = "sk-test-key-0123456789"

// testModel is the model the fake server serves by default.
const testModel = "fake-model"

// fastConfig keeps retry tests quick: millisecond backoff and caps of a few
// seconds, so that a test exercising every attempt still takes milliseconds,
// while a Retry-After of 1 s is below MaxRetryAfter.
func fastConfig() Config {
	return Config{
		APIKey:        testKey,
		MaxAttempts:   3,
		BaseBackoff:   2 * time.Millisecond,
		MaxBackoff:    10 * time.Millisecond,
		MaxRetryAfter: 3 * time.Second,
		IdleTimeout:   5 * time.Second,
	}
}

// serve starts a fake model playing sc and closes it when the test ends.
func serve(tb testing.TB, sc *llmtest.Scenario) *llmtest.Server {
	tb.Helper()
	if sc.Name == "" {
		sc.Name = tb.Name()
	}
	srv := llmtest.NewServer(sc)
	tb.Cleanup(srv.Close)
	return srv
}

// serveResponses starts a fake model answering with responses in order.
func serveResponses(tb testing.TB, responses ...llmtest.Response) *llmtest.Server {
	tb.Helper()
	return serve(tb, &llmtest.Scenario{Responses: responses})
}

// clientFor points cfg at srv.
func clientFor(srv *llmtest.Server, cfg Config) *Client {
	cfg.BaseURL = srv.URL
	return New(cfg)
}

// userRequest is the smallest useful request.
func userRequest(text string) Request {
	return Request{Model: testModel, Messages: []conversation.Message{{Role: conversation.RoleUser, Content: text}}}
}

// deltaLog records every Delta passed to onDelta, in order. Stream calls
// onDelta from its own goroutine, but the lock keeps the race detector
// honest if that ever changes.
type deltaLog struct {
	mu     sync.Mutex
	deltas []Delta
}

func (l *deltaLog) add(d Delta) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deltas = append(l.deltas, d)
}

func (l *deltaLog) all() []Delta {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Delta(nil), l.deltas...)
}

// texts is the Text of every text delta, in order.
func (l *deltaLog) texts() []string {
	var out []string
	for _, d := range l.all() {
		if d.Text != "" {
			out = append(out, d.Text)
		}
	}
	return out
}

func (l *deltaLog) toolNames() []string {
	var out []string
	for _, d := range l.all() {
		if d.ToolName != "" {
			out = append(out, d.ToolName)
		}
	}
	return out
}

func (l *deltaLog) retries() []RetryInfo {
	var out []RetryInfo
	for _, d := range l.all() {
		if d.Retry != nil {
			out = append(out, *d.Retry)
		}
	}
	return out
}

// countingTransport counts round trips, for failures that never reach the
// fake server (a refused connection) and so are not in its request log.
type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// splitRunes cuts s into pieces of size runes, as the fake server does, so
// tests can state the exact chunk sequence they expect.
func splitRunes(s string, size int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		n := min(size, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// wantErrorKind checks that err is an *Error of kind and that its message
// contains every fragment.
func wantErrorKind(t *testing.T, err, kind error, fragments ...string) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %v", kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *llm.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("err = %q (kind %v), want errors.Is(err, %v)", err, e.Kind, kind)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
	return e
}

// The wires' request builders as the tests call them: on the wire c
// sends the request's model to, with c's state.

func responsesBody(c *Client, req Request) ([]byte, error) {
	return c.wireOf(req.Model).(*responsesWire).body(c, req)
}

func responsesInput(c *Client, req Request) (string, []rItem) {
	return c.wireOf(req.Model).(*responsesWire).input(c, req)
}

func messagesBody(c *Client, req Request) ([]byte, error) {
	return c.wireOf(req.Model).(*messagesWire).body(c, req)
}

func toOpenAI(c *Client, req Request) openai.ChatCompletionRequest {
	return c.wireOf(req.Model).(*chatWire).toOpenAI(c, req)
}

func completionTokensField(c *Client, model string) bool {
	return c.wireOf(model).(*chatWire).completionTokensField(c, model)
}
