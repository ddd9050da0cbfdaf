package llm

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestLongRateLimitsReportTheirReset: each real server's way of saying
// "come back in two minutes" ends the call at once with the reset time
// (which the task loop waits for), without spending retries; OpenAI's
// insufficient_quota, also a 429, is no wait but a quota error.
func TestLongRateLimitsReportTheirReset(t *testing.T) {
	for _, shape := range []string{"openai", "openrouter", "retry_after"} {
		t.Run(shape, func(t *testing.T) {
			srv := serveResponses(t,
				llmtest.Response{RateLimit: &llmtest.RateLimit{Shape: shape, ResetS: 120}},
				llmtest.Response{Text: "too soon"},
			)
			start := time.Now()
			_, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), nil)
			e := wantErrorKind(t, err, ErrRateLimited, "asked to wait 2m0s (until ")
			if IsConfigError(err) {
				t.Error("a rate limit reported as a configuration error")
			}
			at, ok := ResetTime(err)
			if !ok || e.RetryAt != at {
				t.Fatalf("ResetTime = %v, %v", at, ok)
			}
			if d := at.Sub(start); d < 118*time.Second || d > 125*time.Second {
				t.Errorf("reset in %s, want about 2 minutes", d)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1: no retry can help before the reset", n)
			}
		})
	}
	t.Run("quota", func(t *testing.T) {
		srv := serveResponses(t, llmtest.Response{RateLimit: &llmtest.RateLimit{Shape: "quota", ResetS: 120}})
		_, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), nil)
		wantErrorKind(t, err, ErrQuota, "You exceeded your current quota")
		if _, ok := ResetTime(err); ok || !IsConfigError(err) {
			t.Errorf("insufficient_quota is a wait (%v) or not a configuration error (%v)", ok, IsConfigError(err))
		}
	})
}

// TestShortRateLimitIsWaitedWithinTheCall: a reset below MaxRetryAfter,
// said only in OpenAI's headers, is waited (not a blind backoff) and the
// call succeeds.
func TestShortRateLimitIsWaitedWithinTheCall(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{RateLimit: &llmtest.RateLimit{ResetS: 0.8}},
		llmtest.Response{Text: "ok"},
	)
	var log deltaLog
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), log.add)
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("resp %q, err %v", resp.Message.Content, err)
	}
	reqs := srv.Requests()
	if gap := reqs[1].Received.Sub(reqs[0].Received); gap < 790*time.Millisecond {
		t.Errorf("retried after %s, before the reset the headers named", gap)
	}
	if r := log.retries(); len(r) != 1 || r[0].Wait != 800*time.Millisecond {
		t.Errorf("retries = %+v, want one waiting 800ms", r)
	}
}

func TestLimitWaitSources(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	h := func(kv ...string) http.Header {
		x := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			x.Set(kv[i], kv[i+1])
		}
		return x
	}
	cases := []struct {
		name string
		h    http.Header
		se   serverError
		want time.Duration
		ok   bool
	}{
		{"nothing", h(), serverError{}, 0, false},
		{"retry-after", h("Retry-After", "30"), serverError{}, 30 * time.Second, true},
		{"retry-after-ms", h("Retry-After-Ms", "1500"), serverError{}, 1500 * time.Millisecond, true},
		{"openai requests ran out", h("X-Ratelimit-Reset-Requests", "6m0s", "X-Ratelimit-Remaining-Requests", "0",
			"X-Ratelimit-Reset-Tokens", "1s", "X-Ratelimit-Remaining-Tokens", "500"), serverError{}, 6 * time.Minute, true},
		{"openai tokens ran out", h("X-Ratelimit-Reset-Requests", "6m0s", "X-Ratelimit-Remaining-Requests", "9",
			"X-Ratelimit-Reset-Tokens", "17.28s", "X-Ratelimit-Remaining-Tokens", "0"), serverError{}, 17280 * time.Millisecond, true},
		{"openai days", h("X-Ratelimit-Reset-Requests", "1d2h0m0s"), serverError{}, 26 * time.Hour, true},
		{"epoch seconds", h("X-Ratelimit-Reset", "1777636920"), serverError{}, time.Unix(1777636920, 0).Sub(at), true},
		{"seconds from now", h("X-Ratelimit-Reset", "42"), serverError{}, 42 * time.Second, true},
		{"openrouter body", h(), serverError{reset: "1777637100000"}, time.UnixMilli(1777637100000).Sub(at), true},
		{"openai message", h(), serverError{message: "Rate limit reached for gpt-4o … Please try again in 7m12.5s. Visit …"}, 7*time.Minute + 12500*time.Millisecond, true},
		{"words", h(), serverError{message: "Too many requests, retry after 30 seconds"}, 30 * time.Second, true},
		{"minutes", h(), serverError{message: "please try again in 2 minutes"}, 2 * time.Minute, true},
		{"the latest wins", h("Retry-After", "5", "X-Ratelimit-Reset-Requests", "1m0s"), serverError{}, time.Minute, true},
		{"a reset in the past is now", h("X-Ratelimit-Reset", "1700000000"), serverError{}, 0, true},
		{"garbage", h("X-Ratelimit-Reset-Requests", "soon", "Retry-After", "later"), serverError{message: "try again in a bit"}, 0, false},
	}
	for _, c := range cases {
		got, ok := limitWait(&failure{server: c.se}, c.h, at)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %s, %v; want %s, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
