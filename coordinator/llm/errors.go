package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Sentinel errors callers branch on, with errors.Is. The error table
// (errtable.go) decides which one a failure is.
var (
	// ErrUnauthorized: the endpoint rejected the API key (HTTP 401/403).
	ErrUnauthorized = errors.New("the model endpoint rejected the API key")
	// ErrModelNotFound: the endpoint does not serve the requested model.
	ErrModelNotFound = errors.New("model not available")
	// ErrNoToolSupport: the model cannot call tools, which ralph needs.
	ErrNoToolSupport = errors.New("model cannot call tools")
	// ErrContextTooLong: the request is longer than the model's window.
	ErrContextTooLong = errors.New("conversation longer than the model's window")
	// ErrQuota: the account has no credit or quota left.
	ErrQuota = errors.New("no credit or quota left")
	// ErrNotAnAPI: the base URL does not lead to an OpenAI-compatible API
	// (typically a missing /v1).
	ErrNotAnAPI = errors.New("not an OpenAI-compatible endpoint")
	// ErrUnreachable: no connection could be made to the endpoint.
	ErrUnreachable = errors.New("model endpoint unreachable")
	// ErrRateLimited: HTTP 429 persisted through every retry.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: a server error (5xx, or an error event inside the
	// answer) persisted through every retry.
	ErrServer = errors.New("model endpoint server error")
	// ErrStalled: the endpoint sent nothing for the idle timeout.
	ErrStalled = errors.New("model endpoint sent nothing")
	// ErrBrokenStream: the stream broke off or could not be read.
	ErrBrokenStream = errors.New("broken model stream")
	// ErrBadRequest: the endpoint refused the request (HTTP 400 and similar).
	ErrBadRequest = errors.New("model endpoint refused the request")
	// ErrContentFiltered: the endpoint's content filter or policy refused
	// the request.
	ErrContentFiltered = errors.New("model endpoint's content filter refused the request")
)

// Error is a failed model call. Its message is one sentence meant for a
// person, carrying the server's own words; Kind is one of the sentinel
// errors above.
type Error struct {
	Kind   error
	Status int
	// Config marks errors that retrying or going on cannot fix: the key,
	// the model, the URL, the model's abilities. ralph exits 2 on them.
	Config bool
	Msg    string
	Err    error
	// RetryAt is when the endpoint said its rate limit resets, when that
	// was later than one call waits (see ResetTime); zero otherwise.
	RetryAt time.Time
	// Refusal is set when the endpoint refused this request for what it
	// carries (see refusal): the endpoint's reason, "HTTP 400: …". Empty
	// for every failure the same request could get past another time.
	Refusal string
}

// Refusal is the endpoint's reason when err is a definite refusal of the
// request's content, "" otherwise (see Error.Refusal).
func Refusal(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Refusal
	}
	return ""
}

// statedWindowRe finds the window a context-length error states. OpenAI,
// vLLM and OpenRouter: "This model's maximum context length is 128000
// tokens"; Anthropic's shape: "prompt is too long: 210000 tokens > 200000
// maximum".
var statedWindowRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)maximum context length is (\d+)|tokens > (\d+) maximum`)
})

// StatedWindow is the context window a context-length refusal (err) says
// the model has, in tokens; 0 when err is no such refusal or says none.
// It is the server's word on its window, truer than ralph's table when
// the two differ, which is when such a refusal comes at all: ralph fits
// every request to the window it believes in.
func StatedWindow(err error) int {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(e.Kind, ErrContextTooLong) {
		return 0
	}
	m := statedWindowRe().FindStringSubmatch(e.Msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1] + m[2])
	return n
}

func (e *Error) Error() string { return e.Msg }

// Unwrap exposes both the sentinel and the underlying cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// IsConfigError reports whether err means ralph or its endpoint is
// configured wrongly (bad key, unknown model, wrong URL, a model without
// tools, a conversation too long for the model) rather than that the task
// failed; such errors exit with the usage/configuration code, and a task
// loop stops at once instead of retrying its task.
func IsConfigError(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Config
	}
	return false
}

// isConnError reports a failure to connect at all.
func isConnError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// rootCause gives the innermost, shortest useful description of err.
func rootCause(err error) string {
	if err == nil {
		return "no error"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "no such host " + dnsErr.Name
	}
	// Stop above our own sentinel: unwrapping "broken model stream: the
	// stream ended without a finish reason" down to ErrBrokenStream would
	// drop the part that says what actually happened.
	for {
		next := errors.Unwrap(err)
		if next == nil || next == ErrBrokenStream {
			return strings.TrimPrefix(err.Error(), ErrBrokenStream.Error()+": ")
		}
		err = next
	}
}

// notAnAPISentence explains a base URL that leads to no OpenAI-compatible
// API. The common case is a missing /v1 (Ollama's root answers "Ollama is
// running" and 404 for /chat/completions), so when the base URL lacks it,
// ralph asks the same server at /v1 and, if that answers, says so.
func (c *Client) notAnAPISentence(ctx context.Context, where string) string {
	base := c.cfg.BaseURL
	if !strings.HasSuffix(base, "/v1") {
		if c.probe(ctx, base+"/v1/models") {
			return fmt.Sprintf("%s is not the OpenAI-compatible API (%s), but %s/v1 is; use --base-url %s/v1 (or %s)", base, where, base, base, c.baseURLEnv())
		}
	}
	return fmt.Sprintf("%s does not answer like an OpenAI-compatible API (%s); check --base-url or %s (it usually ends in /v1)", base, where, c.baseURLEnv())
}

// probe reports whether GET url answers 200, within a short time; a hard
// stop (ctx) ends it at once, as it ends every question ralph asks a
// server beside the chat request.
func (c *Client) probe(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.sideRequest(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	// LM Studio answers 200 with an error body for paths it does not
	// serve, so a 200 counts only with a body that is not an error.
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	return resp.StatusCode == http.StatusOK && !strings.Contains(string(buf[:n]), `"error"`)
}
