package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// failure is one failed attempt, as the error table reads it.
type failure struct {
	// status is the HTTP status of an error response; 0 when there was
	// none, 200 when the error came in a 200 answer.
	status int
	// inStream marks an error the server sent inside an HTTP 200 answer
	// (an SSE data event with an "error" field, or a 200 error body).
	inStream bool
	server   serverError // what the server said, whatever the shape
	err      error       // the transport's or the stream's own error
	stalled  bool        // nothing arrived for the silence limit
	// silentFor is that limit, when it was longer than IdleTimeout: a
	// local model that never began its answer.
	silentFor time.Duration
	// reached is set when this or an earlier attempt of the call got an
	// HTTP response: a refused connection then means the server went away,
	// not that the URL is wrong.
	reached bool
}

func (f *failure) Error() string {
	switch {
	case f.stalled:
		return "no data"
	case f.err != nil:
		return f.err.Error()
	}
	return f.server.describe()
}

func (f *failure) Unwrap() error { return f.err }

// rule is one row of the error table: which failures it matches, what kind
// of error they are, whether another attempt may help, and whether they
// mean a configuration error (exit 2) rather than a failed task.
type rule struct {
	name   string
	match  func(f *failure) bool
	kind   error
	retry  bool
	config bool
}

var (
	// Models that cannot call tools. Ollama: "registry.ollama.ai/library/
	// gemma:2b does not support tools" (HTTP 400, ollama/ollama#5793);
	// vLLM without a tool parser: "\"auto\" tool choice requires
	// --enable-auto-tool-choice and --tool-call-parser to be set" (400);
	// llama.cpp's server without a chat template: "tools param requires
	// --jinja flag"; OpenRouter: "No endpoints found that support tool
	// use" (404).
	noToolsRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)does not support tools|support tool use|tool choice requires|requires --jinja|tools? (are|is) not supported|does not support (function|tool) call`)
	})
	// Prompts longer than the window. OpenAI: code context_length_exceeded,
	// "This model's maximum context length is 128000 tokens"; vLLM and
	// OpenRouter say the same words; llama.cpp's server: type
	// exceed_context_size_error, "the request exceeds the available context
	// size" (ggml-org/llama.cpp#15780); LM Studio: "context length".
	contextRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)maximum context length|exceeds the available context size|context[ _]length[ _]exceeded|prompt is too long|greater than the context length`)
	})
	// Unknown models. OpenAI: code model_not_found; Ollama: "model
	// \"x\" not found, try pulling it first" (404); vLLM: "The model `x`
	// does not exist." (404); OpenRouter: "x is not a valid model ID" (400);
	// Anthropic: not_found_error "model: x" (404).
	modelRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("(?i)model.*(not found|does not exist|not a valid model|no such model)|unknown model|invalid model|^model: ")
	})
	// Paths the server does not serve. OpenAI: "Invalid URL (POST
	// /chat/completions)"; LM Studio: "Unexpected endpoint or method. (POST
	// /chat/completions)" with HTTP 200; FastAPI (vLLM): {"detail":"Not
	// Found"}; Go's and Ollama's "404 page not found".
	endpointRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)invalid url|unexpected endpoint|page not found|no route|^not found$|cannot (post|get) /`)
	})
	// A model served only on OpenAI's Responses API, asked for on chat
	// completions: HTTP 404 "This model is only supported in
	// v1/responses and not in v1/chat/completions."
	responsesOnlyRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)only (supported|available|served) (in|on|through|via) (the )?(v1/responses|/v1/responses|responses api)`)
	})
	// Anthropic's empty account: HTTP 400 invalid_request_error "Your
	// credit balance is too low to access the Anthropic API."
	creditRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)credit balance is too low`) })
	// Moderation refusals share 403 with bad keys on OpenRouter.
	moderationRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)flagged|moderation`) })
	// Content filters. Azure OpenAI: HTTP 400, code content_filter, "The
	// response was filtered due to the prompt triggering Azure OpenAI's
	// content management policy"; OpenAI: code content_policy_violation;
	// others say "content policy" or "content filter" in their words.
	contentFilterRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)content[ _-]?(filter|policy|management policy)`)
	})
)

// contentFiltered reports a failure in which a content filter or policy
// refused the request. OpenAI's Responses API fails a flagged prompt
// with code invalid_prompt ("Invalid prompt: your prompt was flagged as
// potentially violating our usage policy").
func contentFiltered(f *failure) bool {
	return codeIs(f, "content_filter", "content_policy_violation", "content_filtered", "invalid_prompt") || contentFilterRe().MatchString(f.server.message)
}

// refusal is the endpoint's reason when a failure is a definite refusal
// of what the request carries, "" otherwise. HTTP 400, 413 and 422, a
// content filter and a context-length error refuse the request for its
// content: sent again as it is, it would be refused again. A network
// error, a 5xx, a 429 or a stop may pass another time, so they are not
// refusals; nor are a bad key, an unknown model or a model without tools,
// which no message causes.
func refusal(r rule, f *failure) string {
	switch r.kind {
	case ErrContextTooLong, ErrContentFiltered:
	case ErrBadRequest:
		switch f.effectiveStatus() {
		case 400, 413, 422:
		default:
			return ""
		}
	default:
		return ""
	}
	if f.inStream {
		return "an error inside its answer: " + f.server.describe()
	}
	return fmt.Sprintf("HTTP %d: %s", f.status, f.server.describe())
}

func codeIs(f *failure, codes ...string) bool {
	for _, c := range codes {
		if f.server.code == c || f.server.typ == c {
			return true
		}
	}
	return false
}

// status is the failure's HTTP status, or the status an in-stream error
// names in its code (OpenRouter and llama.cpp put it there).
func (f *failure) effectiveStatus() int {
	if f.inStream {
		return f.server.numericCode()
	}
	return f.status
}

// errorTable is every way a model call fails, first match wins. The order
// matters: a server's words about tools or the context window decide
// before its status (llama.cpp once sent its context error as a 500), and
// a bad key before a 404 (some proxies hide unknown keys as 404s only
// after auth).
var errorTable = []rule{
	{name: "stalled", kind: ErrStalled, retry: true,
		match: func(f *failure) bool { return f.stalled }},
	{name: "no tool support", kind: ErrNoToolSupport, config: true,
		match: func(f *failure) bool { return noToolsRe().MatchString(f.server.message) }},
	{name: "context too long", kind: ErrContextTooLong, config: true,
		match: func(f *failure) bool {
			return codeIs(f, "context_length_exceeded", "exceed_context_size_error") || contextRe().MatchString(f.server.message)
		}},
	{name: "bad key", kind: ErrUnauthorized, config: true,
		match: func(f *failure) bool {
			s := f.effectiveStatus()
			return s == 401 || (s == 403 && !moderationRe().MatchString(f.server.message)) || codeIs(f, "invalid_api_key", "authentication_error")
		}},
	{name: "no credit", kind: ErrQuota, config: true,
		match: func(f *failure) bool {
			return f.effectiveStatus() == 402 || codeIs(f, "insufficient_quota") || creditRe().MatchString(f.server.message)
		}},
	{name: "responses only", kind: ErrModelNotFound, config: true,
		match: func(f *failure) bool {
			s := f.effectiveStatus()
			return (s == 400 || s == 404) && responsesOnlyRe().MatchString(f.server.message)
		}},
	{name: "unknown model", kind: ErrModelNotFound, config: true,
		match: func(f *failure) bool {
			if codeIs(f, "model_not_found") {
				return true
			}
			s := f.effectiveStatus()
			return (s == 400 || s == 404 || f.inStream) && f.server.shape != shapeHTML && modelRe().MatchString(f.server.message)
		}},
	{name: "not an OpenAI API", kind: ErrNotAnAPI, config: true,
		match: func(f *failure) bool {
			switch {
			case endpointRe().MatchString(f.server.message):
				return true
			case f.status == 404 || f.status == 405:
				return f.server.shape != shapeObject || f.server.message == ""
			}
			// A web page where the API should be, with status 200.
			return f.status == 200 && !f.inStream && f.server.shape == shapeHTML
		}},
	{name: "content filter", kind: ErrContentFiltered,
		match: func(f *failure) bool {
			return f.effectiveStatus() != 429 && f.effectiveStatus() < 500 && contentFiltered(f)
		}},
	{name: "rate limited", kind: ErrRateLimited, retry: true,
		match: func(f *failure) bool { return f.effectiveStatus() == 429 || codeIs(f, "rate_limit_exceeded") }},
	{name: "server error", kind: ErrServer, retry: true,
		match: func(f *failure) bool {
			switch s := f.effectiveStatus(); {
			case s >= 500, s == 408, s == 409, s == 425:
				return true
			case f.inStream && s == 0:
				// An error event without a status (OpenAI's server_error,
				// Ollama's api_error mid-answer) is the server's trouble;
				// the specific ones were matched above.
				return true
			}
			return false
		}},
	{name: "refused request", kind: ErrBadRequest,
		match: func(f *failure) bool { return f.effectiveStatus() >= 400 }},
	{name: "no such host", kind: ErrUnreachable, config: true,
		match: func(f *failure) bool {
			var dnsErr *net.DNSError
			return errors.As(f.err, &dnsErr) && dnsErr.IsNotFound
		}},
	{name: "server went away", kind: ErrBrokenStream, retry: true,
		match: func(f *failure) bool { return f.reached && isConnError(f.err) }},
	{name: "unreachable", kind: ErrUnreachable, retry: true, config: true,
		match: func(f *failure) bool { return isConnError(f.err) }},
	{name: "broken stream", kind: ErrBrokenStream, retry: true,
		match: func(f *failure) bool {
			return errors.Is(f.err, ErrBrokenStream) || errors.Is(f.err, io.ErrUnexpectedEOF) ||
				errors.Is(f.err, context.DeadlineExceeded) || errors.Is(f.err, syscall.ECONNRESET) || errors.Is(f.err, io.EOF)
		}},
	{name: "other", kind: ErrBrokenStream,
		match: func(*failure) bool { return true }},
}

// lookup finds a failure's row in the table.
func lookup(f *failure) rule {
	for _, r := range errorTable {
		if r.match(f) {
			return r
		}
	}
	return errorTable[len(errorTable)-1]
}

// asFailure reads any error of an attempt as a failure.
func asFailure(err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	return &failure{err: err}
}

// sentence is the one sentence a person reads about a failed call: what
// happened, the server's own words, and what to do.
func (c *Client) sentence(ctx context.Context, r rule, f *failure, model string, attempts int) string {
	base := c.cfg.BaseURL
	where := fmt.Sprintf("HTTP %d: %s", f.status, f.server.describe())
	if f.inStream {
		where = "an error inside its answer: " + f.server.describe()
	}
	after := ""
	if attempts > 1 {
		after = fmt.Sprintf(" after %d attempts", attempts)
	}
	switch r.kind {
	case ErrStalled:
		if f.silentFor > 0 {
			return fmt.Sprintf("the model endpoint %s did not begin its answer within %s%s, the time a local model is given to read the prompt; raise --idle-timeout (stream_idle_timeout, ten times it) if the model is only slow", base, f.silentFor, after)
		}
		return fmt.Sprintf("the model endpoint %s sent nothing for %s%s; raise --idle-timeout (stream_idle_timeout) if the model is only slow", base, c.cfg.IdleTimeout, after)
	case ErrNoToolSupport:
		return fmt.Sprintf("model %q at %s cannot call tools (%s), and ralph works through tools; choose a model that supports them with --model or RALPH_MODEL", model, base, where)
	case ErrContextTooLong:
		return fmt.Sprintf("the conversation is longer than model %q at %s accepts (%s); set context_tokens in the config below the server's window, or start a new session", model, base, where)
	case ErrUnauthorized:
		return fmt.Sprintf("the model endpoint %s rejected the API key (%s); check %s", base, where, c.keyEnv())
	case ErrQuota:
		return fmt.Sprintf("the model endpoint %s refused for want of credit or quota (%s); check the account's plan and billing", base, where)
	case ErrModelNotFound:
		if r.name == "responses only" {
			return fmt.Sprintf("model %q at %s is served only on OpenAI's Responses API, not on chat completions (%s); %s", model, base, where, c.responsesFix())
		}
		return fmt.Sprintf("model %q is not available at %s (%s); choose another with --model or RALPH_MODEL", model, base, where)
	case ErrNotAnAPI:
		return c.notAPISentence(ctx, where)
	case ErrRateLimited:
		return fmt.Sprintf("the model endpoint %s is rate limiting ralph (%s)%s; wait a while or lower --parallel", base, where, after)
	case ErrServer:
		if f.inStream {
			return fmt.Sprintf("the model endpoint %s failed mid-answer (%s)%s", base, where, after)
		}
		return fmt.Sprintf("the model endpoint %s failed (%s)%s", base, where, after)
	case ErrBadRequest:
		return fmt.Sprintf("the model endpoint %s refused the request (%s)", base, where)
	case ErrContentFiltered:
		return fmt.Sprintf("the model endpoint %s's content filter refused the request (%s)", base, where)
	case ErrUnreachable:
		return fmt.Sprintf("cannot reach the model endpoint %s (%s); check --base-url or %s", base, rootCause(f.err), c.baseURLEnv())
	}
	if f.reached && isConnError(f.err) {
		return fmt.Sprintf("the model endpoint %s went away mid-answer (%s)%s", base, rootCause(f.err), after)
	}
	return fmt.Sprintf("the model's answer from %s broke off (%s)%s", base, rootCause(f.err), after)
}

// keyEnv is the variable the key came from, as the sentence about a
// rejected key names it: the configuration's, else the protocol's own
// provider's (its TokenEnv for a bearer token), as the table has them.
func (c *Client) keyEnv() string {
	home := c.wire.home()
	switch {
	case c.cfg.KeyEnv != "":
		return c.cfg.KeyEnv
	case c.cfg.Bearer && home.TokenEnv != "":
		return home.TokenEnv
	}
	return home.KeyEnv
}

// baseURLEnv is the variable that names the endpoint for this protocol,
// as the table has it for the protocol's own provider.
func (c *Client) baseURLEnv() string { return c.wire.home().URLVariable() }

// classify turns the last failure of a call into an *Error.
func (c *Client) classify(ctx context.Context, err error, model string, attempts int) error {
	f := asFailure(err)
	r := lookup(f)
	return &Error{Kind: r.kind, Status: f.status, Config: r.config, Err: err, Msg: c.sentence(ctx, r, f, model, attempts),
		Refusal: refusal(r, f)}
}

// maxAttemptsFor limits retries where more are unlikely to help: a refused
// connection (a wrong port is likelier than a server coming up) and a
// stalled stream (a server silent for the whole idle timeout once will
// likely be again, and each try costs that long).
func (c *Client) maxAttemptsFor(r rule) int {
	switch r.kind {
	case ErrUnreachable:
		return min(c.cfg.MaxAttempts, 3)
	case ErrStalled:
		return min(c.cfg.MaxAttempts, 2)
	}
	return c.cfg.MaxAttempts
}

// shortReason is a retry's reason for progress lines.
func shortReason(f *failure) string {
	switch {
	case f.stalled:
		return "no data"
	case f.inStream:
		return "error in the answer: " + f.server.describe()
	case f.status != 0:
		return fmt.Sprintf("HTTP %d", f.status)
	}
	return rootCause(f.err)
}
