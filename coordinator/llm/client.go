package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
)

// Config configures a Client. Zero values pick sane defaults.
type Config struct {
	BaseURL string // e.g. https://api.openai.com/v1 or http://localhost:11434/v1
	APIKey  string // may be empty for local endpoints
	// MaxAttempts bounds how often one call is tried (default 5).
	MaxAttempts int
	// BaseBackoff is the first retry's wait before jitter (default 500ms);
	// each later wait doubles, capped at MaxBackoff (default 20s).
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// MaxRetryAfter caps how long a Retry-After header may make ralph wait
	// (default 60s); an endpoint asking for longer gets the error instead.
	MaxRetryAfter time.Duration
	// IdleTimeout is the longest silence tolerated while waiting for the
	// response or its next bytes (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// FirstByteTimeout is, for a local endpoint (see local.go), the
	// longest silence before the first byte of the answer (default 10 ×
	// IdleTimeout): a model on a CPU may read a long prompt for minutes
	// before its first word. An Ollama that lists the model as loaded is
	// waited for longer still (local.go).
	FirstByteTimeout time.Duration
	// WaitNotice is how long a silence lasts before the caller hears about
	// it through Delta.Waiting (default 10s, or half of a shorter
	// IdleTimeout).
	WaitNotice time.Duration
	// HTTPClient overrides the transport (tests); its Transport is wrapped.
	HTTPClient *http.Client
	// MaxOutputTokens, when positive, limits each answer (sent as
	// max_tokens or max_completion_tokens, see wire.go; on the Responses
	// API as max_output_tokens, which counts the reasoning too).
	MaxOutputTokens int
	// Provider is the provider's name as memory/providers has it ("" for
	// an endpoint known by its URL only): it marks the opaque blocks this
	// client keeps (conversation.OpaqueBlock) and picks which it sends.
	Provider string
	// Protocol is the wire protocol, as the provider table names it
	// (providers.Provider.Protocol; "" is OpenAI's chat completions). New
	// chooses the protocol's implementation from it once (protocols.go);
	// on the Messages API BaseURL is the host without /v1, as the
	// provider's BaseURLEnv is.
	Protocol string
	// Bearer sends APIKey as "Authorization: Bearer" where the protocol
	// would send it otherwise (ANTHROPIC_AUTH_TOKEN instead of x-api-key).
	Bearer bool
	// ThinkingTokens, when positive, switches extended thinking on with
	// this budget (Messages API); 0 leaves it off.
	ThinkingTokens int
	// KeyEnv is the variable APIKey came from ("ANTHROPIC_API_KEY"), named
	// in the sentence about a rejected key; "" names the protocol's usual
	// one.
	KeyEnv string
	// WebSearch offers the provider's own web_search where it has one
	// (websearch.go): the person's web_search, with the network allowed.
	WebSearch bool
	// Wire is the configuration's wire for the OpenAI protocol: "chat"
	// (chat completions), "responses" (OpenAI's Responses API), or "" and
	// "auto", which choose per model (providers.Wire, protocols.go).
	Wire string
}

// DefaultIdleTimeout is how long ralph waits for a silent endpoint: long
// enough for a local model to read a big prompt, short enough that a hung
// server is noticed within minutes, not a quarter of an hour.
const DefaultIdleTimeout = 60 * time.Second

// defaultTransport keeps enough idle connections per host for many child
// agents streaming from one endpoint at once; the standard library's two
// would make every parallel turn open new connections. It is made on
// first use: a command that talks to no model (ralph --version) does not
// copy a transport at its start (docs/development.md, "Start-up budget").
var defaultTransport = sync.OnceValue(func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 128
	t.MaxIdleConns = 256
	t.DialContext = dialContext // a connection opened ahead first (Preconnect)
	// A request up to this size is copied once, into the connection's
	// buffer, and written in one system call. With the standard 4 kB, a
	// child's 15 kB request took two writes and a buffer of its own,
	// allocated for each request (net's genericReadFrom), on pages new
	// to the process. A buffer is used only as far as it is filled.
	t.WriteBufferSize = requestBufferSize
	return t
})

// requestBufferSize is a connection's write buffer: a whole request of
// a child agent (some 15 kB) or a one-shot, with room for a conversation
// of a few turns.
const requestBufferSize = 64 << 10

// Client streams a model's answers from one endpoint, over its
// protocol's wire (protocols.go). It holds what every wire shares: the
// configuration, the transport, what the endpoint's server is, the
// fallback models; each wire holds its own protocol's state.
type Client struct {
	cfg Config
	// wire is the protocol, chosen once in New (protocols.go).
	wire       wire
	httpClient *http.Client
	// dialect is set once an answer carried a served dialect's system
	// fingerprint (Ollama's): it allows asking the server for the
	// context it serves (served.go, dialects.go).
	dialect atomic.Pointer[servedDialect]
	// truncWarned is set once a truncated prompt has been reported.
	truncWarned atomic.Bool
	// local: the endpoint is on this machine or its network (local.go).
	local bool
	// fallback are the models a turn goes to when this one is overloaded
	// or unavailable (fallback.go).
	fallback fallbackChain
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.BaseBackoff <= 0 {
		cfg.BaseBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 20 * time.Second
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 60 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.FirstByteTimeout <= 0 {
		cfg.FirstByteTimeout = 10 * cfg.IdleTimeout
	}
	if cfg.WaitNotice <= 0 {
		cfg.WaitNotice = 10 * time.Second
	}
	cfg.WaitNotice = min(cfg.WaitNotice, cfg.IdleTimeout/2)
	base := defaultTransport()
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		base = cfg.HTTPClient.Transport
	}
	// The protocol is chosen here, once (protocols.go). A client naming
	// no endpoint gets the table's for the protocol's own provider: the
	// configuration resolves every session's endpoint (memory/config),
	// so this is only the default of a bare llm.Config.
	w := wireFor(cfg.Protocol)
	if cfg.BaseURL == "" {
		cfg.BaseURL = w.home().BaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	hc := &http.Client{Transport: tap{base}}
	return &Client{cfg: cfg, wire: w, httpClient: hc, local: isLocal(cfg.BaseURL)}
}

// BaseURL is the endpoint this client talks to.
func (c *Client) BaseURL() string { return c.cfg.BaseURL }

// stream is Stream on this client's endpoint alone: every attempt of one
// model, without fallback models. The request is offered in the model's
// terms (Request.Faces) and its answer's calls come back in ralph's.
func (c *Client) stream(ctx context.Context, req Request, emit func(Delta)) (Response, error) {
	canonical := req
	if f := req.Faces; f != nil {
		req.Tools, req.Messages = f.Offer(req.Model, req.Tools, req.Messages)
	}
	resp, err := c.streamOffered(ctx, req, emit)
	if err == nil && canonical.Faces != nil {
		for i, call := range resp.Message.ToolCalls {
			resp.Message.ToolCalls[i] = canonical.Faces.Canonical(req.Model, call)
		}
	}
	return resp, err
}

// streamOffered is stream for a request in the model's own terms.
func (c *Client) streamOffered(ctx context.Context, req Request, emit func(Delta)) (Response, error) {
	var (
		lastErr error
		reached bool
		learnt  bool
	)
	attempt := 0
	for attempt < c.cfg.MaxAttempts {
		attempt++
		slot := newSlot()
		resp, err := c.attempt(withSlot(ctx, slot), req, slot, emit)
		if err == nil {
			// Asked outside the attempt's context, whose requests carry
			// the tools of the chat request.
			resp.Truncation = c.truncation(ctx, req, resp.read)
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("model call cancelled: %w", ctx.Err())
		}
		f := asFailure(err)
		reached = reached || f.reached
		f.reached = reached
		lastErr = f
		if !learnt && c.wireOf(req.Model).learn(c, req, f, emit) {
			// A request the endpoint refused for a field it does not
			// know goes again at once without it, and one for a model
			// served only on another API goes there; that is no retry.
			learnt = true
			attempt--
			continue
		}
		r := lookup(f)
		if !r.retry || attempt >= c.maxAttemptsFor(r) {
			break
		}
		wait := c.backoff(attempt)
		ra, asked := slot.retryAfterWait()
		if r.kind == ErrRateLimited {
			// A rate limit says when it resets in more ways than
			// Retry-After (limits.go).
			ra, asked = limitWait(f, slot.limitHeader(), slot.receivedAt())
		}
		if asked {
			if ra > c.cfg.MaxRetryAfter {
				// A wait of ages would overflow the time; a year is as good.
				until := slot.receivedAt().Add(min(ra, 365*24*time.Hour))
				return Response{}, &Error{Kind: ErrRateLimited, Status: f.status, Err: f, RetryAt: until,
					Msg: fmt.Sprintf("the model endpoint %s asked to wait %s (until %s) before retrying, longer than the %s ralph waits within one call",
						c.cfg.BaseURL, roundWait(ra), text.Clock(until, time.Now()), c.cfg.MaxRetryAfter)}
			}
			wait = ra
		}
		emit(Delta{Retry: &RetryInfo{Attempt: attempt, Wait: wait, Reason: shortReason(f)}})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, fmt.Errorf("model call cancelled: %w", ctx.Err())
		case <-t.C:
		}
	}
	return Response{}, c.classify(ctx, lastErr, req.Model, attempt)
}

// serialize makes onDelta safe to call from the stream and the idle
// watchdog at once, and a no-op when nil.
func serialize(onDelta func(Delta)) func(Delta) {
	if onDelta == nil {
		return func(Delta) {}
	}
	var mu sync.Mutex
	return func(d Delta) {
		mu.Lock()
		defer mu.Unlock()
		onDelta(d)
	}
}

// roundWait is a wait as people read it: whole seconds.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.BaseBackoff << (attempt - 1)
	if d > c.cfg.MaxBackoff || d <= 0 {
		d = c.cfg.MaxBackoff
	}
	// Full jitter on a fifth of the wait spreads retries of parallel agents.
	j := time.Duration(rand.Int64N(int64(d)/5 + 1))
	return d - d/10 + j
}
