package llm

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// A session may name fallback models (fallback_models, --fallback-model),
// as Claude Code's fallbackModel does: when a turn's model is overloaded
// or unavailable after the call's own retries (Stream's retry path), the
// same turn goes to the next fallback model, then the next; the next turn
// starts again with the session's own model. A rate limit is no reason to
// switch (the limit resets, and the loop waits for it) unless the person
// asked for it (fallback_on_limit); nor is a refused request or a bad key,
// which another model would not mend.

// Fallback is a model a turn goes to when the one before it fails so.
type Fallback struct {
	// Model is the model's name as its endpoint knows it.
	Model string
	// Client serves it: another provider's client, or nil for the
	// session's own endpoint.
	Client *Client
	// Provider is the provider's name when it is another than the
	// session's, "" otherwise.
	Provider string
	// Note is said the first time the fallback answers instead of the
	// session's model, when it is another provider's: what does not
	// carry over.
	Note string
}

// FallbackInfo describes a turn moved to a fallback model, so faces can
// say so and discard any partial text of the failed model.
type FallbackInfo struct {
	// From is the model that failed: the session's, or the fallback
	// model before To.
	From string `json:"from"`
	// To is the fallback model the turn goes to.
	To string `json:"to"`
	// Reason is how From failed, in a few words ("HTTP 529").
	Reason string `json:"reason"`
	// Note says, the first time another provider's model answers, what
	// does not carry over (the prompt cache, thinking signatures).
	Note string `json:"note,omitempty"`
}

// fallbackChain is a client's fallback models.
type fallbackChain struct {
	models  []Fallback
	onLimit bool
	noted   []sync.Once
}

// WithFallbacks gives c fallback models, tried in order when a turn's
// model is overloaded or unavailable (and, with onLimit, rate limited
// beyond what one call waits). It returns c, and must be called before c
// is used.
func (c *Client) WithFallbacks(onLimit bool, models ...Fallback) *Client {
	c.fallback = fallbackChain{models: models, onLimit: onLimit, noted: make([]sync.Once, len(models))}
	return c
}

// Stream runs one chat completion, calling onDelta (which may be nil) with
// text as it arrives, before each retry and while the endpoint is silent,
// and returns the assembled turn. onDelta is never called concurrently.
// Failed attempts are retried with exponential backoff and jitter,
// honouring Retry-After, as the error table says; a turn whose model is
// overloaded or unavailable after that goes to the fallback models in
// turn (WithFallbacks). A cancelled ctx returns at once with an error
// wrapping ctx.Err().
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	emit := serialize(onDelta)
	resp, err := c.stream(ctx, req, emit)
	from := req.Model
	for i, fb := range c.fallback.models {
		reason, ok := c.fallback.reason(err)
		if !ok || ctx.Err() != nil {
			break
		}
		info := &FallbackInfo{From: from, To: fb.Model, Reason: reason}
		if fb.Note != "" {
			c.fallback.noted[i].Do(func() { info.Note = fb.Note })
		}
		emit(Delta{Fallback: info})
		cl := fb.Client
		if cl == nil {
			cl = c
		}
		r := req
		r.Model = fb.Model
		resp, err = cl.stream(ctx, r, emit)
		if err == nil {
			resp.Model = fb.Model
		}
		from = fb.Model
	}
	return resp, err
}

// fallbackStatuses are the HTTP statuses of an overloaded or unavailable
// model: Anthropic's 529 overloaded_error, a 503, and a gateway's 502 or
// 504 for a server behind it that does not answer.
var fallbackStatuses = map[int]bool{502: true, 503: true, 504: true, 529: true}

// reason says why a failed call moves its turn to the next model, and
// false when it does not.
func (fc fallbackChain) reason(err error) (string, bool) {
	var e *Error
	if err == nil || !errors.As(err, &e) {
		return "", false
	}
	f := asFailure(e.Err)
	switch {
	case errors.Is(e.Kind, ErrServer) && (fallbackStatuses[f.effectiveStatus()] || overloaded(f)):
		return shortReason(f), true
	case errors.Is(e.Kind, ErrUnreachable):
		return "unreachable: " + rootCause(f.err), true
	case errors.Is(e.Kind, ErrRateLimited) && fc.onLimit:
		return "rate or usage limit: " + shortReason(f), true
	}
	return "", false
}

// overloaded reports a failure whose server said it is overloaded, in
// whatever status or shape: Anthropic's overloaded_error event inside an
// HTTP 200 stream.
func overloaded(f *failure) bool {
	return codeIs(f, "overloaded_error", "overloaded") || strings.Contains(strings.ToLower(f.server.message), "overloaded")
}

// Provider is the name of the provider this client speaks to, "" for an
// endpoint known by its URL only.
func (c *Client) Provider() string { return c.cfg.Provider }

// ForProvider is a client of another provider with this client's
// settings (attempts, timeouts, output limit, transport): the client a
// fallback model of that provider is asked through. keyEnv names the
// variable its key came from, for the sentence a refused key gets.
func (c *Client) ForProvider(provider, protocol, baseURL, keyEnv, key string, bearer bool) *Client {
	cfg := c.cfg
	cfg.Provider, cfg.Protocol, cfg.BaseURL = provider, protocol, baseURL
	cfg.KeyEnv, cfg.APIKey, cfg.Bearer = keyEnv, key, bearer
	// The configuration's wire names the API of the session's own
	// endpoint; another provider's is chosen by model.
	cfg.Wire = ""
	return New(cfg)
}
