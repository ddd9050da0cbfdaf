package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	openai "github.com/sashabaranov/go-openai"
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
	// response headers or the next chunk (default 180s: local models can
	// take long to read a big prompt).
	IdleTimeout time.Duration
	// HTTPClient overrides the transport (tests); its Transport is wrapped.
	HTTPClient *http.Client
}

// defaultTransport keeps enough idle connections per host for many child
// agents streaming from one endpoint at once; the standard library's two
// would make every parallel turn open new connections.
var defaultTransport http.RoundTripper = func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 128
	t.MaxIdleConns = 256
	return t
}()

// Client streams chat completions from one endpoint.
type Client struct {
	cfg Config
	oa  *openai.Client
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
		cfg.IdleTimeout = 180 * time.Second
	}
	base := defaultTransport
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		base = cfg.HTTPClient.Transport
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	cfg.BaseURL = oc.BaseURL
	oc.HTTPClient = &http.Client{Transport: headerRecorder{base}}
	return &Client{cfg: cfg, oa: openai.NewClientWithConfig(oc)}
}

// BaseURL is the endpoint this client talks to.
func (c *Client) BaseURL() string { return c.cfg.BaseURL }

// Stream runs one chat completion, calling onDelta (which may be nil) with
// text as it arrives and before each retry, and returns the assembled turn. Failed attempts are
// retried with exponential backoff and jitter, honouring Retry-After; a
// cancelled ctx returns at once with an error wrapping ctx.Err().
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	oreq := toOpenAI(req)
	var lastErr error
	attempt := 0
	for attempt < c.cfg.MaxAttempts {
		attempt++
		hdr := &recordedHeader{}
		resp, err := c.attempt(withHeaderSlot(ctx, hdr), oreq, onDelta)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("model call cancelled: %w", ctx.Err())
		}
		lastErr = err
		status, _ := httpStatus(err)
		if !retryable(status, err) || attempt >= c.maxAttemptsFor(err) {
			break
		}
		wait := c.backoff(attempt)
		if ra, ok := hdr.retryAfter(); ok {
			if ra > c.cfg.MaxRetryAfter {
				return Response{}, &Error{Kind: ErrRateLimited, Status: status, Err: err,
					Msg: fmt.Sprintf("the model endpoint %s asked to wait %s before retrying, longer than the %s ralph waits", c.cfg.BaseURL, ra, c.cfg.MaxRetryAfter)}
			}
			wait = ra
		}
		if onDelta != nil {
			onDelta(Delta{Retry: &RetryInfo{Attempt: attempt, Wait: wait, Reason: shortReason(status, err)}})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, fmt.Errorf("model call cancelled: %w", ctx.Err())
		case <-t.C:
		}
	}
	return Response{}, c.classify(lastErr, req.Model, attempt)
}

// maxAttemptsFor limits retries of a refused connection: a wrong port is far
// more likely than a server coming up within seconds, and the user should
// hear so quickly.
func (c *Client) maxAttemptsFor(err error) int {
	if isConnError(err) {
		return min(c.cfg.MaxAttempts, 3)
	}
	return c.cfg.MaxAttempts
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

func shortReason(status int, err error) string {
	if status != 0 {
		return "HTTP " + strconv.Itoa(status)
	}
	return rootCause(err)
}

// attempt makes one streaming request and assembles the answer.
func (c *Client) attempt(ctx context.Context, oreq openai.ChatCompletionRequest, onDelta func(Delta)) (Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The idle watchdog cancels the attempt when the endpoint goes silent for
	// longer than IdleTimeout; every received chunk pushes it back.
	var timedOut atomic.Bool
	idle := time.AfterFunc(c.cfg.IdleTimeout, func() {
		timedOut.Store(true)
		cancel()
	})
	defer idle.Stop()
	stream, err := c.oa.CreateChatCompletionStream(ctx, oreq)
	if err != nil {
		if timedOut.Load() {
			return Response{}, fmt.Errorf("%w: no response within %s", ErrBrokenStream, c.cfg.IdleTimeout)
		}
		return Response{}, err
	}
	defer stream.Close()
	var (
		out   Response
		text  strings.Builder
		calls []*conversation.ToolCall
		byIdx = map[int]*conversation.ToolCall{}
	)
	out.Message.Role = conversation.RoleAssistant
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if timedOut.Load() {
				return Response{}, fmt.Errorf("%w: no data for %s", ErrBrokenStream, c.cfg.IdleTimeout)
			}
			if ctx.Err() != nil {
				return Response{}, err
			}
			return Response{}, fmt.Errorf("%w: %w", ErrBrokenStream, err)
		}
		idle.Reset(c.cfg.IdleTimeout)
		if chunk.Usage != nil {
			out.Usage = conversation.Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				if onDelta != nil {
					onDelta(Delta{Text: ch.Delta.Content})
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				var call *conversation.ToolCall
				if tc.Index != nil {
					call = byIdx[*tc.Index]
					if call == nil {
						call = &conversation.ToolCall{}
						byIdx[*tc.Index] = call
						calls = append(calls, call)
					}
				} else {
					// Some servers omit the index: a fragment with a new id,
					// or a name when the last call has one, starts a call;
					// anything else continues the last call.
					n := len(calls)
					newCall := n == 0 || (tc.ID != "" && tc.ID != calls[n-1].ID) ||
						(tc.ID == "" && tc.Function.Name != "" && calls[n-1].Name != "")
					if !newCall {
						call = calls[n-1]
					} else {
						call = &conversation.ToolCall{}
						calls = append(calls, call)
					}
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Function.Name != "" && call.Name == "" {
					// Some servers repeat the name in every fragment; the
					// first one is the name.
					call.Name = tc.Function.Name
					if onDelta != nil {
						onDelta(Delta{ToolName: call.Name})
					}
				}
				call.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				out.FinishReason = string(ch.FinishReason)
			}
		}
	}
	if out.FinishReason == "" {
		return Response{}, fmt.Errorf("%w: the stream ended without a finish reason", ErrBrokenStream)
	}
	out.Message.Content = text.String()
	for i, call := range calls {
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d", i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, *call)
	}
	return out, nil
}

func toOpenAI(req Request) openai.ChatCompletionRequest {
	o := openai.ChatCompletionRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	for _, m := range req.Messages {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		o.Messages = append(o.Messages, om)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		o.Tools = append(o.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return o
}
