package coordinator

import (
	"context"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
)

// A turn the session's model could not answer goes to the fallback
// model: one fallback event and a decision say so, the answer is the
// fallback's, and the next turn asks the session's model first again.
func TestFallbackEventAndDecision(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"status":503,"headers":{"Retry-After":"0"}},{"status":503,"headers":{"Retry-After":"0"}},{"status":503,"headers":{"Retry-After":"0"}},
		{"text":"from the smaller model"},
		{"text":"the session's model again"}]}`)
	h.coord.opts.Model.(*llm.Client).WithFallbacks(false, llm.Fallback{Model: "small-model"})
	res := h.coord.Run(context.Background(), "x")
	if res.IsError || res.Text != "from the smaller model" {
		t.Fatalf("result %+v", res)
	}
	if n := h.count(event.Fallback); n != 1 {
		t.Fatalf("%d fallback events", n)
	}
	h.mu.Lock()
	var fb *event.FallbackInfo
	var decided bool
	for _, ev := range h.events {
		if ev.Type == event.Fallback {
			fb = ev.Fallback
		}
		if ev.Type == event.Decision && ev.Decision != nil && ev.Decision.Kind == "fallback" {
			decided = true
		}
	}
	h.mu.Unlock()
	if fb == nil || fb.From != "fake-model" || fb.To != "small-model" || fb.Reason != "HTTP 503" || !decided {
		t.Errorf("fallback %+v, decided %v", fb, decided)
	}
	res = h.coord.Run(context.Background(), "again")
	reqs := h.srv.Requests()
	if res.Text != "the session's model again" || reqs[len(reqs)-1].Request.Model != "fake-model" {
		t.Errorf("the next turn: %q from %q", res.Text, reqs[len(reqs)-1].Request.Model)
	}
}
