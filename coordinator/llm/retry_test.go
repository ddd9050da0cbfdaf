package llm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

func TestRetryAfterIsHonoured(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Status: 429, Headers: map[string]string{"Retry-After": "1"}},
		llmtest.Response{Text: "finally"},
	)
	var log deltaLog
	start := time.Now()
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), log.add)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "finally" {
		t.Errorf("content = %q", resp.Message.Content)
	}
	// BaseBackoff is 2 ms, so only the header can explain a 1 s wait.
	if elapsed < time.Second {
		t.Errorf("returned after %s, want at least the 1 s Retry-After", elapsed)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(reqs))
	}
	if gap := reqs[1].Received.Sub(reqs[0].Received); gap < time.Second {
		t.Errorf("second request came %s after the first, want ≥ 1 s", gap)
	}
	want := []RetryInfo{{Attempt: 1, Wait: time.Second, Reason: "HTTP 429"}}
	if got := log.retries(); !reflect.DeepEqual(got, want) {
		t.Errorf("retry deltas = %+v, want %+v", got, want)
	}
}

// An endpoint asking for a longer wait than ralph tolerates gets the error
// at once instead of a silently hung agent. The huge value would overflow a
// time.Duration if converted naively and turn into an immediate retry.
func TestRetryAfterTooLongFailsAtOnce(t *testing.T) {
	for _, ra := range []string{"120", "99999999999", "Inf"} {
		t.Run(ra, func(t *testing.T) {
			srv := serveResponses(t,
				llmtest.Response{Status: 429, Headers: map[string]string{"Retry-After": ra}},
				llmtest.Response{Text: "too late"},
			)
			var log deltaLog
			start := time.Now()
			_, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), log.add)
			// Generous for loaded CI machines; honouring the header would
			// take minutes, and even MaxRetryAfter is 3 s.
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("took %s, want an immediate failure", elapsed)
			}
			wantErrorKind(t, err, ErrRateLimited, srv.URL, "asked to wait")
			if IsConfigError(err) {
				t.Errorf("rate limiting reported as a configuration error")
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
			if r := log.retries(); len(r) != 0 {
				t.Errorf("retry announced although none follows: %+v", r)
			}
		})
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Status: 500},
		llmtest.Response{Status: 502},
		llmtest.Response{Text: "recovered"},
	)
	var log deltaLog
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "recovered" || len(srv.Requests()) != 3 {
		t.Errorf("content %q after %d requests, want recovered after 3", resp.Message.Content, len(srv.Requests()))
	}
	r := log.retries()
	if len(r) != 2 || r[0].Attempt != 1 || r[0].Reason != "HTTP 500" || r[1].Attempt != 2 || r[1].Reason != "HTTP 502" {
		t.Errorf("retry deltas = %+v", r)
	}
	for _, ri := range r {
		// fastConfig: 2 ms base, 10 ms cap, ±10 % jitter.
		if ri.Wait <= 0 || ri.Wait > 11*time.Millisecond {
			t.Errorf("retry wait %s outside the configured backoff", ri.Wait)
		}
	}
}

// TestFailureClassification checks that each way a call can fail ends in
// the right sentinel, after the right number of attempts, with a message
// that says what happened.
func TestFailureClassification(t *testing.T) {
	tests := []struct {
		name         string
		scenario     llmtest.Scenario
		model        string // request model; default testModel
		wantKind     error
		wantRequests int
		wantConfig   bool
		wantMsg      []string
	}{
		{
			name:         "persistent 429",
			scenario:     llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Status: 429}}},
			wantKind:     ErrRateLimited,
			wantRequests: 3,
			wantMsg:      []string{"429", "after 3 attempts", "fake error 429"},
		},
		{
			name:         "persistent 503",
			scenario:     llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Status: 503}}},
			wantKind:     ErrServer,
			wantRequests: 3,
			wantMsg:      []string{"HTTP 503", "after 3 attempts"},
		},
		{
			name:         "401 wrong key",
			scenario:     llmtest.Scenario{APIKey: "sk-the-right-key", Responses: []llmtest.Response{{Text: "never"}}},
			wantKind:     ErrUnauthorized,
			wantRequests: 1,
			wantConfig:   true,
			wantMsg:      []string{"rejected the API key", "HTTP 401"},
		},
		{
			name:         "403",
			scenario:     llmtest.Scenario{Responses: []llmtest.Response{{Status: 403}}},
			wantKind:     ErrUnauthorized,
			wantRequests: 1,
			wantConfig:   true,
			wantMsg:      []string{"HTTP 403"},
		},
		{
			name:         "404 model_not_found",
			scenario:     llmtest.Scenario{Model: "the-real-model", Responses: []llmtest.Response{{Text: "never"}}},
			model:        "no-such-model",
			wantKind:     ErrModelNotFound,
			wantRequests: 1,
			wantConfig:   true,
			wantMsg:      []string{`"no-such-model"`, "HTTP 404", "--model"},
		},
		{
			name: "400 bad request",
			scenario: llmtest.Scenario{Responses: []llmtest.Response{{Status: 400,
				Body: `{"error":{"message":"messages[3].content is required","type":"invalid_request_error"}}`}}},
			wantKind:     ErrBadRequest,
			wantRequests: 1,
			wantMsg:      []string{"HTTP 400", "messages[3].content is required"},
		},
		{
			name:         "truncated stream",
			scenario:     llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Text: "half an ans", Truncate: true}}},
			wantKind:     ErrBrokenStream,
			wantRequests: 3,
			wantMsg:      []string{"broke off", "without a finish reason", "after 3 attempts"},
		},
		{
			name: "malformed chunk",
			scenario: llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Raw: []string{
				`{"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}`, `{not json`}}}},
			wantKind:     ErrBrokenStream,
			wantRequests: 3,
			wantMsg:      []string{"after 3 attempts", "invalid character"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, &tt.scenario)
			req := userRequest("hi")
			if tt.model != "" {
				req.Model = tt.model
			}
			_, err := clientFor(srv, fastConfig()).Stream(context.Background(), req, nil)
			msg := append([]string{srv.URL}, tt.wantMsg...)
			wantErrorKind(t, err, tt.wantKind, msg...)
			if IsConfigError(err) != tt.wantConfig {
				t.Errorf("IsConfigError = %v, want %v", IsConfigError(err), tt.wantConfig)
			}
			if n := len(srv.Requests()); n != tt.wantRequests {
				t.Errorf("server saw %d requests, want %d", n, tt.wantRequests)
			}
		})
	}
}

// closedPort returns a 127.0.0.1 address nothing listens on: a port that was
// just bound and released, so connecting to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestConnectionRefusedIsUnreachable(t *testing.T) {
	ct := &countingTransport{next: http.DefaultTransport}
	cfg := fastConfig()
	cfg.MaxAttempts = 5 // a refused connection must stop at 3 regardless
	cfg.BaseURL = "http://" + closedPort(t) + "/v1"
	cfg.HTTPClient = &http.Client{Transport: ct}
	var log deltaLog
	_, err := New(cfg).Stream(context.Background(), userRequest("hi"), log.add)
	wantErrorKind(t, err, ErrUnreachable, cfg.BaseURL, "connection refused", "OPENAI_BASE_URL")
	if !IsConfigError(err) {
		t.Errorf("IsConfigError = false for an unreachable endpoint")
	}
	if n := ct.n.Load(); n != 3 {
		t.Errorf("%d connection attempts, want 3", n)
	}
	r := log.retries()
	if len(r) != 2 || r[0].Reason != "connection refused" {
		t.Errorf("retry deltas = %+v, want 2 saying connection refused", r)
	}
}

func TestTruncatedThenGoodSucceeds(t *testing.T) {
	srv := serveResponses(t,
		llmtest.Response{Text: "partial answ", ChunkSize: 4, Truncate: true},
		llmtest.Response{Text: "full answer", ChunkSize: 4},
	)
	var log deltaLog
	resp, err := clientFor(srv, fastConfig()).Stream(context.Background(), userRequest("hi"), log.add)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "full answer" {
		t.Errorf("content = %q; text of the broken attempt must not leak into the answer", resp.Message.Content)
	}
	// The face must see the void text, then the retry, then the new text,
	// so it knows what to discard.
	var seq []string
	for _, d := range log.all() {
		switch {
		case d.Retry != nil:
			seq = append(seq, "RETRY")
			if d.Retry.Attempt != 1 || !strings.Contains(d.Retry.Reason, "finish reason") {
				t.Errorf("retry = %+v, want attempt 1 with a reason naming the missing finish reason", *d.Retry)
			}
		case d.Text != "":
			seq = append(seq, d.Text)
		}
	}
	want := []string{"part", "ial ", "answ", "RETRY", "full", " ans", "wer"}
	if !reflect.DeepEqual(seq, want) {
		t.Errorf("delta sequence = %q, want %q", seq, want)
	}
}

func TestIdleTimeout(t *testing.T) {
	tests := []struct {
		name string
		resp llmtest.Response
		want string
	}{
		// Headers arrive at once, then the stream goes silent. The delays
		// are long so that only the idle timeout can end the call early,
		// even on a loaded machine.
		{"between chunks", llmtest.Response{Text: "slow model", ChunkDelayMS: 10000}, "sent nothing for 150ms"},
		// The endpoint does not even send headers.
		{"before headers", llmtest.Response{Text: "slow model", DelayMS: 10000}, "sent nothing for 150ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{tt.resp}})
			cfg := fastConfig()
			cfg.IdleTimeout = 150 * time.Millisecond
			cfg.MaxAttempts = 2
			c := clientFor(srv, cfg)
			c.local = false // a hosted endpoint's rules (local.go has a local one's)
			start := time.Now()
			_, err := c.Stream(context.Background(), userRequest("hi"), nil)
			elapsed := time.Since(start)
			wantErrorKind(t, err, ErrStalled, "after 2 attempts", tt.want)
			if elapsed < 300*time.Millisecond || elapsed > 5*time.Second {
				t.Errorf("took %s, want about two idle timeouts (300 ms)", elapsed)
			}
			srv.Close() // wait for the handlers to notice the client left
			for _, r := range srv.Requests() {
				if !r.Cancelled {
					t.Errorf("request %d was not abandoned by the client", r.Index)
				}
			}
		})
	}
}

// A slow but steady stream must not trip the idle timeout: every chunk
// resets it, so the total may far exceed IdleTimeout.
func TestIdleTimeoutResetByEachChunk(t *testing.T) {
	// 40 chunks 50 ms apart take 2 s, longer than IdleTimeout, while each
	// gap leaves a wide margin for a heavily loaded machine.
	text := strings.Repeat("0123456789", 4)
	srv := serveResponses(t, llmtest.Response{Text: text, ChunkSize: 1, ChunkDelayMS: 50})
	cfg := fastConfig()
	cfg.IdleTimeout = 1500 * time.Millisecond
	cfg.MaxAttempts = 1
	start := time.Now()
	resp, err := clientFor(srv, cfg).Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if d := time.Since(start); d <= cfg.IdleTimeout {
		t.Errorf("stream took only %s; the test needs it to outlast IdleTimeout", d)
	}
	if resp.Message.Content != text {
		t.Errorf("content = %q", resp.Message.Content)
	}
}

// cancelBound is how soon Stream must return after its context is
// cancelled. It is typically a millisecond or two; the bound leaves room for
// a CI machine busy with other tests while staying far below the waits
// (seconds) that a Stream ignoring cancellation would sit through.
const cancelBound = 250 * time.Millisecond

func TestCancelDuringSlowStream(t *testing.T) {
	// Events 600 ms apart (the role chunk, then "a" at 1.2 s): a Stream
	// that noticed the cancel only at the next chunk would return about
	// 550 ms after it, well over the bound below.
	srv := serveResponses(t, llmtest.Response{Text: "abcdefghij", ChunkSize: 1, ChunkDelayMS: 600})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := make(chan time.Time, 1)
	onDelta := func(d Delta) {
		// Cancel from elsewhere while Stream waits for the next chunk, as
		// an interrupt (Ctrl-C, /stop) does.
		if d.Text == "a" {
			time.AfterFunc(50*time.Millisecond, func() {
				cancelled <- time.Now()
				cancel()
			})
		}
	}
	_, err := clientFor(srv, fastConfig()).Stream(ctx, userRequest("hi"), onDelta)
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	select {
	case at := <-cancelled:
		if d := returned.Sub(at); d > cancelBound {
			t.Errorf("Stream returned %s after cancel, want < %s", d, cancelBound)
		}
	default:
		t.Fatal("Stream returned before the test cancelled it")
	}
	srv.Close() // wait until the handler has recorded how it ended
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Cancelled {
		t.Errorf("requests = %+v, want one, cancelled", reqs)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*Config)
		fail llmtest.Response
	}{
		{"exponential backoff", func(c *Config) { c.BaseBackoff, c.MaxBackoff = 10*time.Second, 10*time.Second },
			llmtest.Response{Status: 500}},
		{"retry-after", func(c *Config) { c.MaxRetryAfter = time.Minute },
			llmtest.Response{Status: 429, Headers: map[string]string{"Retry-After": "30"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveResponses(t, tt.fail, llmtest.Response{Text: "never"})
			cfg := fastConfig()
			tt.cfg(&cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cancelled := make(chan time.Time, 1)
			onDelta := func(d Delta) {
				if d.Retry != nil {
					if d.Retry.Wait < 9*time.Second {
						t.Errorf("retry wait %s, want the long configured wait", d.Retry.Wait)
					}
					time.AfterFunc(30*time.Millisecond, func() {
						cancelled <- time.Now()
						cancel()
					})
				}
			}
			_, err := clientFor(srv, cfg).Stream(ctx, userRequest("hi"), onDelta)
			returned := time.Now()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			select {
			case at := <-cancelled:
				if d := returned.Sub(at); d > cancelBound {
					t.Errorf("Stream returned %s after cancel, want < %s", d, cancelBound)
				}
			default:
				t.Fatal("Stream returned before the test cancelled it")
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}
}

func TestAlreadyCancelledContext(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := clientFor(srv, fastConfig()).Stream(ctx, userRequest("hi"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var e *Error
	if errors.As(err, &e) || IsConfigError(err) {
		t.Errorf("cancellation classified as a model failure: %v", err)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"1", time.Second, true},
		{" 2 ", 2 * time.Second, true},
		{"0", 0, true},
		{"0.5", 500 * time.Millisecond, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"NaN", 0, false},
		{at.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{at.Add(-time.Hour).Format(http.TimeFormat), 0, true}, // a date in the past means now
		// Far too long to convert to a Duration; must saturate, not wrap
		// around to a negative wait.
		{"99999999999", time.Duration(1<<63 - 1), true},
		{"Inf", time.Duration(1<<63 - 1), true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.value, at)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("retryAfter(%q) = %s, %v; want %s, %v", tt.value, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	c := New(Config{BaseBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, MaxAttempts: 100})
	for attempt := 1; attempt <= 80; attempt++ {
		// Doubling step by step, capped, cannot overflow like a shift.
		nominal := 100 * time.Millisecond
		for range attempt - 1 {
			nominal = min(2*nominal, 2*time.Second)
		}
		for range 20 {
			got := c.backoff(attempt)
			// ±10 % jitter around the doubled, capped wait; never negative
			// even when the shift overflows.
			if got < nominal-nominal/10 || got > nominal+nominal/10 {
				t.Fatalf("backoff(%d) = %s, want %s ± 10%%", attempt, got, nominal)
			}
		}
	}
}
