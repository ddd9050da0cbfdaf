package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ralph-dev/ralph/memory/text"
)

// Sentinel errors callers branch on, with errors.Is.
var (
	// ErrUnauthorized: the endpoint rejected the API key (HTTP 401/403).
	ErrUnauthorized = errors.New("the model endpoint rejected the API key")
	// ErrModelNotFound: the endpoint does not serve the requested model.
	ErrModelNotFound = errors.New("model not available")
	// ErrUnreachable: no connection could be made to the endpoint.
	ErrUnreachable = errors.New("model endpoint unreachable")
	// ErrRateLimited: HTTP 429 persisted through every retry.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: HTTP 5xx persisted through every retry.
	ErrServer = errors.New("model endpoint server error")
	// ErrBrokenStream: the stream broke off or could not be read.
	ErrBrokenStream = errors.New("broken model stream")
	// ErrBadRequest: the endpoint refused the request (HTTP 400 and similar).
	ErrBadRequest = errors.New("model endpoint refused the request")
)

// Error is a failed model call. Its message is one sentence meant for a
// person; Kind is one of the sentinel errors above.
type Error struct {
	Kind   error
	Status int
	Msg    string
	Err    error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap exposes both the sentinel and the underlying cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// IsConfigError reports whether err means ralph is configured wrongly (bad
// key, unknown model, wrong URL) rather than that the task failed; such
// errors exit with the usage/configuration code.
func IsConfigError(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrModelNotFound) || errors.Is(err, ErrUnreachable)
}

// httpStatus extracts the HTTP status of a go-openai error, or 0.
func httpStatus(err error) (int, string) {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		code := ""
		if s, ok := apiErr.Code.(string); ok {
			code = s
		}
		return apiErr.HTTPStatusCode, firstNonEmpty(apiErr.Message, code)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		msg := strings.TrimSpace(string(reqErr.Body))
		msg = text.Clip(msg, 200)
		if msg == "" && reqErr.Err != nil {
			msg = reqErr.Err.Error()
		}
		return reqErr.HTTPStatusCode, msg
	}
	return 0, ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// retryable reports whether a failed attempt is worth repeating.
func retryable(status int, err error) bool {
	switch status {
	case 408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529:
		return true
	}
	if status != 0 {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false
	}
	return isConnError(err) || errors.Is(err, ErrBrokenStream) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNRESET)
}

// isConnError reports a failure to connect at all.
func isConnError(err error) bool {
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

// classify turns the last error of a call into an *Error with one sentence.
func (c *Client) classify(err error, model string, attempts int) error {
	status, detail := httpStatus(err)
	base := c.cfg.BaseURL
	switch {
	case status == 401 || status == 403:
		return &Error{Kind: ErrUnauthorized, Status: status, Err: err,
			Msg: fmt.Sprintf("the model endpoint %s rejected the API key (HTTP %d: %s); check OPENAI_API_KEY", base, status, detail)}
	case status == 404 || strings.Contains(detail, "model_not_found"):
		return &Error{Kind: ErrModelNotFound, Status: status, Err: err,
			Msg: fmt.Sprintf("model %q is not available at %s (HTTP %d: %s); choose another with --model or RALPH_MODEL", model, base, status, detail)}
	case status == 429:
		return &Error{Kind: ErrRateLimited, Status: status, Err: err,
			Msg: fmt.Sprintf("the model endpoint %s still answered HTTP 429 (rate limited) after %d attempts: %s", base, attempts, detail)}
	case status >= 500:
		return &Error{Kind: ErrServer, Status: status, Err: err,
			Msg: fmt.Sprintf("the model endpoint %s failed with HTTP %d after %d attempts: %s", base, status, attempts, detail)}
	case status >= 400:
		return &Error{Kind: ErrBadRequest, Status: status, Err: err,
			Msg: fmt.Sprintf("the model endpoint %s refused the request (HTTP %d): %s", base, status, detail)}
	case isConnError(err):
		return &Error{Kind: ErrUnreachable, Err: err,
			Msg: fmt.Sprintf("cannot reach the model endpoint %s (%s); check --base-url or OPENAI_BASE_URL", base, rootCause(err))}
	case errors.Is(err, ErrBrokenStream):
		return &Error{Kind: ErrBrokenStream, Err: err,
			Msg: fmt.Sprintf("the model's answer from %s broke off after %d attempts: %s", base, attempts, rootCause(err))}
	}
	return &Error{Kind: ErrBrokenStream, Err: err,
		Msg: fmt.Sprintf("the model call to %s failed after %d attempts: %s", base, attempts, rootCause(err))}
}

// rootCause gives the innermost, shortest useful description of err.
func rootCause(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "no such host " + dnsErr.Name
	}
	// Stop above our own sentinel: unwrapping "broken model stream: no data
	// for 3m0s" down to ErrBrokenStream would drop the part that says what
	// actually happened.
	for {
		next := errors.Unwrap(err)
		if next == nil || next == ErrBrokenStream {
			return strings.TrimPrefix(err.Error(), ErrBrokenStream.Error()+": ")
		}
		err = next
	}
}
