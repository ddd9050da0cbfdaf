package llm

// The Messages API's errors and limits, each as Anthropic sends it,
// through the one error table and limit wait.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

func TestMessagesOverloadedEveryTimeSaysSo(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Text: "a", StreamError: overloadedBody},
		llmtest.Response{Text: "b", StreamError: overloadedBody},
		llmtest.Response{Text: "c", StreamError: overloadedBody},
	)
	_, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), nil)
	wantErrorKind(t, err, ErrServer, "failed mid-answer", "Overloaded", "after 3 attempts")
}

func TestMessages529IsRetried(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Status: 529, Body: overloadedBody},
		llmtest.Response{Text: "after the overload"},
	)
	var log deltaLog
	resp, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), log.add)
	if err != nil || resp.Message.Content != "after the overload" {
		t.Fatalf("Stream: %v, %q", err, resp.Message.Content)
	}
	if r := log.retries(); len(r) != 1 || r[0].Reason != "HTTP 529" {
		t.Errorf("retries = %+v", r)
	}
}

func TestMessages400IsRefused(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: text content blocks must be non-empty"},"request_id":"req_1"}`},
		llmtest.Response{Text: "never"},
	)
	_, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), nil)
	wantErrorKind(t, err, ErrBadRequest, "refused the request", "text content blocks must be non-empty")
	if r := Refusal(err); !strings.Contains(r, "HTTP 400: messages.0.content") {
		t.Errorf("refusal = %q", r)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("a refused request was sent %d times", n)
	}
	if strings.Contains(err.Error(), "OpenAI") {
		t.Errorf("error speaks of OpenAI: %v", err)
	}
}

func TestMessagesPromptTooLong(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`})
	_, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), nil)
	wantErrorKind(t, err, ErrContextTooLong)
	if w := StatedWindow(err); w != 200000 {
		t.Errorf("stated window = %d", w)
	}
}

func TestMessagesErrorSentences(t *testing.T) {
	cases := []struct {
		name    string
		resp    llmtest.Response
		cfg     func(*Config)
		kind    error
		phrases []string
	}{
		{"key", llmtest.Response{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`},
			nil, ErrUnauthorized, []string{"invalid x-api-key", "check ANTHROPIC_API_KEY"}},
		{"token", llmtest.Response{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid bearer token"}}`},
			func(c *Config) { c.Bearer = true }, ErrUnauthorized, []string{"check ANTHROPIC_AUTH_TOKEN"}},
		{"named variable", llmtest.Response{Status: 401},
			func(c *Config) { c.KeyEnv = "MY_CLAUDE_KEY" }, ErrUnauthorized, []string{"check MY_CLAUDE_KEY"}},
		{"model", llmtest.Response{Status: 404, Body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`},
			nil, ErrModelNotFound, []string{"claude-nope"}},
		{"credit", llmtest.Response{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}`},
			nil, ErrQuota, []string{"credit"}},
		{"not the API", llmtest.Response{Status: 404, Body: "404 page not found"},
			nil, ErrNotAnAPI, []string{"Anthropic's Messages API", "ANTHROPIC_BASE_URL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveResponses(t, tc.resp)
			cfg := messagesConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			_, err := messagesClient(srv, cfg).Stream(context.Background(), claudeRequest("hi"), nil)
			wantErrorKind(t, err, tc.kind, tc.phrases...)
			if strings.Contains(err.Error(), "OPENAI") || strings.Contains(err.Error(), "OpenAI-compatible") {
				t.Errorf("error speaks of OpenAI: %v", err)
			}
		})
	}
}

func TestMessagesRateLimitResetRFC3339(t *testing.T) {
	reset := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339)
	srv := serveResponses(t,
		llmtest.Response{Status: 429, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			Headers: map[string]string{
				"anthropic-ratelimit-tokens-reset":     reset,
				"anthropic-ratelimit-tokens-remaining": "0",
				"anthropic-ratelimit-requests-reset":   time.Now().Add(-time.Minute).UTC().Format(time.RFC3339),
			}},
		llmtest.Response{Text: "after the limit"},
	)
	var log deltaLog
	start := time.Now()
	resp, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), log.add)
	if err != nil || resp.Message.Content != "after the limit" {
		t.Fatalf("Stream: %v", err)
	}
	// RFC 3339 has whole seconds: the reset is 0.5 to 1.5 s away.
	if el := time.Since(start); el < 400*time.Millisecond {
		t.Errorf("retried after %s, before the reset", el)
	}
	if r := log.retries(); len(r) != 1 || r[0].Wait < 400*time.Millisecond || r[0].Wait > 2*time.Second {
		t.Errorf("retries = %+v", r)
	}
}

func TestAnthropicResetHeaders(t *testing.T) {
	at := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	in := func(d time.Duration) string { return at.Add(d).Format(time.RFC3339) }
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"none", h(), 0, false},
		{"soonest in the future", h("Anthropic-Ratelimit-Requests-Reset", in(30*time.Second), "Anthropic-Ratelimit-Tokens-Reset", in(5*time.Second),
			"Anthropic-Ratelimit-Input-Tokens-Reset", in(-time.Minute)), 5 * time.Second, true},
		{"the one run out", h("Anthropic-Ratelimit-Requests-Reset", in(30*time.Second), "Anthropic-Ratelimit-Requests-Remaining", "0",
			"Anthropic-Ratelimit-Tokens-Reset", in(5*time.Second), "Anthropic-Ratelimit-Tokens-Remaining", "9000"), 30 * time.Second, true},
		{"all past", h("Anthropic-Ratelimit-Tokens-Reset", in(-time.Second)), 0, false},
		{"not a time", h("Anthropic-Ratelimit-Tokens-Reset", "soon"), 0, false},
	}
	for _, tc := range cases {
		got, ok := anthropicReset(tc.h, at)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %s, %v; want %s, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	// With a Retry-After as well, the later of the two is waited for.
	f := &failure{status: 429}
	got, ok := limitWait(f, h("Retry-After", "10", "Anthropic-Ratelimit-Tokens-Reset", in(5*time.Second)), at)
	if !ok || got != 10*time.Second {
		t.Errorf("with Retry-After: %s, %v", got, ok)
	}
}

func TestMessagesModels(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("X-Api-Key")+" "+r.Header.Get("Anthropic-Version"))
		if r.URL.Query().Get("after_id") == "" {
			fmt.Fprint(w, `{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":true,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"type":"model","id":"claude-haiku-4-5","display_name":"Claude Haiku 4.5","created_at":"2025-10-01T00:00:00Z"}],"has_more":false,"last_id":"claude-haiku-4-5"}`)
	}))
	defer srv.Close()
	cfg := messagesConfig()
	cfg.BaseURL = srv.URL
	models, err := New(cfg).Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(models, []ServedModel{{ID: "claude-haiku-4-5"}, {ID: "claude-sonnet-4-5"}}) {
		t.Errorf("models = %+v", models)
	}
	want := []string{"/v1/models?limit=1000 " + testKey + " 2023-06-01", "/v1/models?after_id=claude-sonnet-4-5&limit=1000 " + testKey + " 2023-06-01"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("requests = %q", seen)
	}
}

func TestMessagesModelsKeyRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	cfg := messagesConfig()
	cfg.BaseURL = srv.URL
	_, err := New(cfg).Models(context.Background())
	if err == nil || !strings.Contains(err.Error(), "check ANTHROPIC_API_KEY") || !strings.Contains(err.Error(), "invalid x-api-key") {
		t.Errorf("err = %v", err)
	}
}

func TestMessagesLongRateLimitIsLeftToTheRun(t *testing.T) {
	reset := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	srv := serveResponses(t, llmtest.Response{Status: 429,
		Body:    `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your organization's rate limit"}}`,
		Headers: map[string]string{"anthropic-ratelimit-requests-reset": reset.Format(time.RFC3339), "anthropic-ratelimit-requests-remaining": "0"}})
	start := time.Now()
	_, err := messagesClient(srv, messagesConfig()).Stream(context.Background(), claudeRequest("hi"), nil)
	wantErrorKind(t, err, ErrRateLimited, "asked to wait")
	if at, ok := ResetTime(err); !ok || at.Sub(reset).Abs() > 2*time.Second {
		t.Errorf("reset time = %s, %v; want %s", at, ok, reset)
	}
	if time.Since(start) > time.Second {
		t.Errorf("a two-hour limit was waited for within the call")
	}
}

func TestMessagesUnreachableNamesAnthropicsVariable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	cfg := messagesConfig()
	cfg.BaseURL = url
	cfg.MaxAttempts = 1
	_, err := New(cfg).Stream(context.Background(), claudeRequest("hi"), nil)
	wantErrorKind(t, err, ErrUnreachable, "ANTHROPIC_BASE_URL")
}
