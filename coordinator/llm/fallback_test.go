package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// fallbacksOf returns the fallback deltas of a log.
func (l *deltaLog) fallbacks() []FallbackInfo {
	var out []FallbackInfo
	for _, d := range l.all() {
		if d.Fallback != nil {
			out = append(out, *d.Fallback)
		}
	}
	return out
}

// A model that stays overloaded through the call's own retries hands the
// same turn to the fallback model, on another endpoint; the next turn
// starts again with the session's model.
func TestFallbackAfterOverload(t *testing.T) {
	for _, status := range []int{529, 503, 502} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			primary := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Status: status, Body: overloadedBody}}})
			other := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Text: "from the fallback"}}})
			fb := clientFor(other, fastConfig())
			c := clientFor(primary, fastConfig()).WithFallbacks(false, Fallback{Model: "backup-model", Client: fb, Provider: "other", Note: "the prompt cache does not carry over"})
			for turn := 1; turn <= 2; turn++ {
				var log deltaLog
				resp, err := c.Stream(context.Background(), userRequest("hi"), log.add)
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				if resp.Message.Content != "from the fallback" || resp.Model != "backup-model" {
					t.Errorf("turn %d: answer %q from %q, want the fallback's", turn, resp.Message.Content, resp.Model)
				}
				f := log.fallbacks()
				if len(f) != 1 || f[0].From != testModel || f[0].To != "backup-model" || f[0].Reason == "" {
					t.Fatalf("turn %d: fallback deltas %+v", turn, f)
				}
				if (f[0].Note != "") != (turn == 1) {
					t.Errorf("turn %d: note %q; want it the first time only", turn, f[0].Note)
				}
				if n := len(log.retries()); n != fastConfig().MaxAttempts-1 {
					t.Errorf("turn %d: %d retries before the fallback, want the primary's own %d", turn, n, fastConfig().MaxAttempts-1)
				}
			}
			// Each turn tried the primary first, with all its attempts.
			if n, want := len(primary.Requests()), 2*fastConfig().MaxAttempts; n != want {
				t.Errorf("primary saw %d requests, want %d", n, want)
			}
			reqs := other.Requests()
			if len(reqs) != 2 || reqs[0].Request.Model != "backup-model" {
				t.Errorf("fallback saw %d requests (%+v)", len(reqs), reqs)
			}
		})
	}
}

// Anthropic's overloaded error can come inside an HTTP 200 stream.
func TestFallbackAfterOverloadMidStream(t *testing.T) {
	srv := serve(t, &llmtest.Scenario{Responses: []llmtest.Response{
		{StreamError: overloadedBody}, {StreamError: overloadedBody}, {StreamError: overloadedBody}, {Text: "second model"},
	}})
	c := clientFor(srv, fastConfig()).WithFallbacks(false, Fallback{Model: "second"})
	var log deltaLog
	resp, err := c.Stream(context.Background(), userRequest("hi"), log.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "second model" || resp.Model != "second" {
		t.Errorf("answer %q from %q", resp.Message.Content, resp.Model)
	}
	reqs := srv.Requests()
	if reqs[len(reqs)-1].Request.Model != "second" {
		t.Errorf("the last request asked for %q", reqs[len(reqs)-1].Request.Model)
	}
}

// A rate limit, a refused request and a bad key are no reason to switch:
// the limit resets, and another model would be refused or rejected too.
func TestNoFallbackOnRateLimitOrRefusal(t *testing.T) {
	for name, r := range map[string]llmtest.Response{
		"429": {Status: 429},
		"400": {Status: 400, Body: `{"error":{"message":"bad field","type":"invalid_request_error"}}`},
		"401": {Status: 401},
	} {
		t.Run(name, func(t *testing.T) {
			primary := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{r}})
			other := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Text: "never"}}})
			c := clientFor(primary, fastConfig()).WithFallbacks(false, Fallback{Model: "backup", Client: clientFor(other, fastConfig())})
			var log deltaLog
			if _, err := c.Stream(context.Background(), userRequest("hi"), log.add); err == nil {
				t.Fatal("the call succeeded")
			}
			if n := len(other.Requests()); n != 0 || len(log.fallbacks()) != 0 {
				t.Errorf("the fallback was asked %d times (%+v)", n, log.fallbacks())
			}
		})
	}
}

// With fallback_on_limit a rate limit that outlasts the call's retries
// moves the turn on too.
func TestFallbackOnLimitWhenAsked(t *testing.T) {
	primary := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Status: 429, Headers: map[string]string{"Retry-After": "3600"}}}})
	c := clientFor(primary, fastConfig()).WithFallbacks(true, Fallback{Model: "backup"})
	// The primary's endpoint serves the fallback too, and limits both;
	// the second model's call is what the test looks for.
	var log deltaLog
	_, err := c.Stream(context.Background(), userRequest("hi"), log.add)
	if _, ok := ResetTime(err); !ok {
		t.Fatalf("err = %v, want the limit's", err)
	}
	f := log.fallbacks()
	if len(f) != 1 || f[0].To != "backup" {
		t.Errorf("fallback deltas %+v", f)
	}
	if reqs := primary.Requests(); len(reqs) != 2 || reqs[1].Request.Model != "backup" {
		t.Errorf("requests: %d", len(reqs))
	}
}

// Fallback models are tried in order, each after the one before failed
// so; the error of the last is the call's.
func TestFallbackChainInOrder(t *testing.T) {
	srv := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Status: 529, Body: overloadedBody}}})
	cfg := fastConfig()
	cfg.MaxAttempts = 1
	c := clientFor(srv, cfg).WithFallbacks(false, Fallback{Model: "b"}, Fallback{Model: "c"})
	var log deltaLog
	_, err := c.Stream(context.Background(), userRequest("hi"), log.add)
	if !errors.Is(err, ErrServer) {
		t.Fatalf("err = %v", err)
	}
	f := log.fallbacks()
	if len(f) != 2 || f[0].From != testModel || f[0].To != "b" || f[1].From != "b" || f[1].To != "c" {
		t.Errorf("fallback deltas %+v", f)
	}
	var models []string
	for _, r := range srv.Requests() {
		models = append(models, r.Request.Model)
	}
	if len(models) != 3 || models[0] != testModel || models[1] != "b" || models[2] != "c" {
		t.Errorf("models asked: %v", models)
	}
}

// An endpoint nobody answers at is unavailable: the turn moves on.
func TestFallbackWhenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/v1"
	l.Close()
	other := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Text: "here"}}})
	cfg := fastConfig()
	cfg.BaseURL = dead
	c := New(cfg).WithFallbacks(false, Fallback{Model: "backup", Client: clientFor(other, fastConfig())})
	resp, err := c.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil || resp.Message.Content != "here" {
		t.Fatalf("answer %q, err %v", resp.Message.Content, err)
	}
}
