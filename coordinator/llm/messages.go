package llm

// Anthropic's Messages API (POST {base}/v1/messages), the second wire
// protocol of *Client beside OpenAI's chat completions. It goes through the
// same Stream: the one retry loop, error table, limit waits, idle watchdog
// and tap, which sees these requests as it sees go-openai's.
//
// Why not Anthropic's Go SDK (github.com/anthropics/anthropic-sdk-go,
// v1.84.0, measured on this machine against a program that only imports
// net/http and encoding/json, GODEBUG=inittrace=1 over five runs): it
// adds about 117 kB and 0.3 to 0.9 ms to package initialisation (its own
// init 0.17 ms and a YAML parser's 0.10 ms at best; the start-up budget is
// 2 ms and 1 MB, of which ralph uses about 1 ms and 0.6 MB), 11 MB to a
// hello-world binary (16.8 against 5.7 MB) and eighteen modules
// (OpenTelemetry, a YAML parser, a JSON schema reflector, gjson/sjson).
// Its retries can be switched off (WithMaxRetries(0)) and it takes
// ralph's http.Client, so it would fit within the budget, but it gives
// ralph nothing ralph needs: the retry loop, the error bodies,
// the limit headers and the idle watchdog are ralph's own and read the
// raw responses through the tap; the request must be the same bytes turn
// after turn for the prompt cache, and thinking blocks must go back byte
// for byte, both easier with ralph's own encoding (messages_wire.go); and
// its NewClient reads ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and
// ANTHROPIC_BASE_URL from the environment unless told otherwise, and
// WithBaseURL calls log.Fatalf on a bad URL. So this is a small client:
// net/http and an SSE reader (messages_stream.go), under a thousand lines.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/ralph-dev/ralph/memory/providers"
)

// messagesWire is Anthropic's Messages API (POST {base}/v1/messages),
// ralph's own small client (messages*.go), with its tool cache.
type messagesWire struct {
	// tools keeps the encoded tool definitions (messages_wire.go).
	tools toolCache
}

func (*messagesWire) home() providers.Provider { return homeRow("anthropic") }

func (*messagesWire) models(ctx context.Context, c *Client) ([]ServedModel, error) {
	return c.messagesModels(ctx)
}

func (*messagesWire) get(ctx context.Context, c *Client, u string) (*http.Response, error) {
	req, err := c.newMessagesRequest(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return c.httpClient.Do(req)
}

func (*messagesWire) notAPI(_ context.Context, c *Client, where string) string {
	return c.notMessagesSentence(where)
}

// learn learns nothing: the Messages API's schema is one, and a field it
// refuses is ralph's mistake to fix, not the server's dialect.
func (*messagesWire) learn(*Client, Request, *failure, func(Delta)) bool { return false }

func (*messagesWire) surelyKey() bool { return true }

// webSearch is always offered: the Messages API's web_search server tool
// serves every current model.
func (*messagesWire) webSearch(string) error { return nil }

// warm builds chat completions' codecs, as a session of this protocol
// has since before the wires were apart; its own are built at its first
// request.
func (*messagesWire) warm() { warmChat() }

// anthropicVersion is the API version ralph speaks.
const anthropicVersion = "2023-06-01"

// messagesURL is path at the API's host: the base URL is the host without
// /v1, as ANTHROPIC_BASE_URL is, and a /v1 (or the whole /v1/messages)
// given anyway is tolerated.
func (c *Client) messagesURL(path string) string {
	base := strings.TrimSuffix(strings.TrimRight(c.cfg.BaseURL, "/"), "/messages")
	return strings.TrimSuffix(base, "/v1") + path
}

// messagesRequest is an HTTP request to the Messages API with its headers:
// the key as x-api-key, or as a bearer token (ANTHROPIC_AUTH_TOKEN).
func (c *Client) newMessagesRequest(ctx context.Context, method, u string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, fmt.Errorf("build the request to %s: %w", u, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Anthropic-Version", anthropicVersion)
	switch {
	case c.cfg.APIKey == "":
	case c.cfg.Bearer:
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	default:
		req.Header.Set("X-Api-Key", c.cfg.APIKey)
	}
	return req, nil
}

// attempt is one attempt on the Messages API: one streamed request,
// assembled. fail and stalled are attempt's, so that its failures read as
// the OpenAI path's do.
func (w *messagesWire) attempt(ctx context.Context, c *Client, req Request, slot *attemptSlot, emit func(Delta),
	fail func(error) (Response, error), stalled *atomic.Bool) (Response, error) {
	var whole Response
	for pause := 0; ; pause++ {
		out, stop, err := w.once(ctx, c, req, slot, emit, fail, stalled)
		if err != nil {
			return out, err
		}
		whole = joinPaused(whole, out, pause)
		if stop != "pause_turn" || pause == maxPauses {
			// A turn paused once too often ends as one cut short
			// (finishReason).
			if req.Answer && req.Schema != nil {
				whole = answerOf(whole)
			}
			return whole, nil
		}
		// The API paused a long turn (its own server tools'): sent back
		// as it is, the turn goes on where it stopped. The API refuses a
		// last assistant turn whose text ends in white space ("final
		// assistant content cannot end with trailing whitespace"), so
		// the copy sent back ends without it; the turn kept is whole.
		sent := out.Message
		if len(sent.ToolCalls) == 0 {
			sent.Content = strings.TrimRightFunc(sent.Content, unicode.IsSpace)
		}
		req.Messages = append(slices.Clip(req.Messages), sent)
	}
}

// maxPauses bounds how often one turn the API paused is sent back to go
// on (stop_reason pause_turn).
const maxPauses = 3

// joinPaused is the turn so far (whole, after pause continuations) with
// the next part of it.
func joinPaused(whole, part Response, pause int) Response {
	if pause == 0 {
		return part
	}
	whole.Message.Content += part.Message.Content
	whole.Message.ToolCalls = append(whole.Message.ToolCalls, part.Message.ToolCalls...)
	whole.Message.Opaque = append(whole.Message.Opaque, part.Message.Opaque...)
	whole.Reasoning += part.Reasoning
	whole.Usage = whole.Usage.Add(part.Usage)
	whole.FinishReason = part.FinishReason
	return whole
}

// once is one request of an attempt, and its raw stop reason.
func (w *messagesWire) once(ctx context.Context, c *Client, req Request, slot *attemptSlot, emit func(Delta),
	fail func(error) (Response, error), stalled *atomic.Bool) (Response, string, error) {
	failed := func(err error) (Response, string, error) {
		out, err := fail(err)
		return out, "", err
	}
	body, err := w.body(c, req)
	if err != nil {
		return failed(err)
	}
	hr, err := c.newMessagesRequest(ctx, http.MethodPost, c.messagesURL("/v1/messages"), body)
	if err != nil {
		return failed(err)
	}
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := c.httpClient.Do(hr)
	if err != nil {
		return failed(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return failed(fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	turn := &messagesTurn{emit: emit}
	err = turn.read(resp.Body)
	switch {
	case errors.Is(err, errStreamError):
		// The tap saw the error event too, unless its line was too long
		// to inspect.
		slot.mu.Lock()
		if slot.streamErr == nil {
			se, ok := parseErrorJSON(append([]byte(`{"error":`), append(turn.err, '}')...))
			if !ok {
				se = serverError{shape: shapeText, message: words(string(turn.err))}
			}
			slot.streamErr = &se
		}
		slot.mu.Unlock()
		return failed(fmt.Errorf("%w: %w", ErrBrokenStream, err))
	case err != nil:
		if ctx.Err() != nil && !stalled.Load() {
			return Response{}, "", err
		}
		return failed(fmt.Errorf("%w: %w", ErrBrokenStream, err))
	case slot.inStream() != nil:
		return failed(fmt.Errorf("%w: %w", ErrBrokenStream, errStreamError))
	case !turn.done:
		return failed(fmt.Errorf("%w: the stream ended before message_stop", ErrBrokenStream))
	case turn.stop == "":
		return failed(fmt.Errorf("%w: the stream ended without a stop reason", ErrBrokenStream))
	}
	out, err := turn.finish(c.opaqueProvider())
	if err != nil {
		return failed(err)
	}
	if !turn.sawUsage {
		out.Usage = estimateUsage(req, out.Message, out.Reasoning)
	}
	// Anthropic refuses a prompt too long rather than cut it, so there is
	// no truncation to look for (Response.read stays 0).
	return out, turn.stop, nil
}

// maxModelPages bounds how many pages of GET /v1/models are read.
const maxModelPages = 20

// messagesModels is Models for the Messages API: GET /v1/models, page by
// page ({"data":[{"id":…}],"has_more":…,"last_id":…}).
func (c *Client) messagesModels(ctx context.Context) ([]ServedModel, error) {
	var out []ServedModel
	after := ""
	for range maxModelPages {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		page, err := c.modelsPage(ctx, c.messagesURL("/v1/models?"+q.Encode()))
		if err != nil {
			return nil, err
		}
		for _, m := range page.Data {
			out = append(out, ServedModel{ID: m.ID})
		}
		if !page.HasMore || page.LastID == "" || page.LastID == after {
			break
		}
		after = page.LastID
	}
	return listed(out), nil
}

type modelsPage struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}

func (c *Client) modelsPage(ctx context.Context, u string) (modelsPage, error) {
	var page modelsPage
	body, err := c.list(ctx, u, "GET /v1/models")
	if err != nil {
		return page, err
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return page, c.notAList(ctx, "GET /v1/models", err)
	}
	return page, nil
}

// notMessagesSentence explains a base URL that leads to no Messages API.
func (c *Client) notMessagesSentence(where string) string {
	return fmt.Sprintf("%s does not answer like Anthropic's Messages API (%s); check --base-url or %s (the host, without /v1)", c.cfg.BaseURL, where, c.baseURLEnv())
}
