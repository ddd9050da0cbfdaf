package llm

// OpenAI's Responses API (POST {base}/responses), the third wire of
// *Client beside chat completions and Anthropic's Messages API. OpenAI
// serves its coding models (every codex model, o1-pro, o3-pro) only here,
// and only here is the reasoning of GPT-5 and the o-series carried from
// one tool call to the next: with store false, the API sends each
// reasoning item encrypted, and takes it back in the next request's input
// (responses_wire.go). It goes through the same Stream as the other
// wires: the one retry loop, error table, limit waits, idle watchdog and
// tap. Which requests come here is protocols.go's choice, by model.
//
// Why not OpenAI's Go SDK (github.com/openai/openai-go/v3, v3.98.0, the
// one with a Responses client; go-openai has none), measured on this
// machine against a program that only imports net/http and encoding/json,
// GODEBUG=inittrace=1 over five runs: package initialisation takes 2.05
// to 2.27 ms and 314 kB against 0.49 to 0.60 ms and 34 kB, so about
// 1.6 ms and 280 kB more (its own package 0.82 ms, its responses package
// 0.47 ms, its live package 0.18 ms), which alone is most of the 2 ms
// start-up budget (TestInitBudget); a hello-world binary is 31.1 MB
// against 5.5 MB; and its module graph is 33 modules (Azure's and AWS's
// SDKs and identity libraries for its Azure and Bedrock options, gjson
// and sjson, a websocket library), six of them linked. It retries by
// default (two retries), and its NewClient reads OPENAI_API_KEY,
// OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID and more from the
// environment unless told otherwise. As with the Messages API, it would
// give ralph nothing ralph needs: the retry loop, the error bodies, the
// limit headers and the idle watchdog are ralph's own and read the raw
// responses through the tap, and the request must be the same bytes turn
// after turn for the prompt cache, with the reasoning items given back
// byte for byte. So this is a small client: net/http and an SSE reader
// (responses_stream.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
)

// responsesWire is OpenAI's Responses API (POST {base}/responses),
// ralph's own small client (responses*.go), with what it has learnt of
// the endpoint. The model list, side requests and the sentence about a
// base URL that is no API are chat's: OpenAI's endpoint serves both
// APIs, and so do the servers that speak this one.
type responsesWire struct {
	// tools keeps the encoded tool definitions (responses_wire.go).
	tools toolCache
	// schema is set once the endpoint refused a strict output schema
	// (learn.go).
	schema looseSchema
	// droppedReasoning holds the reasoning items the endpoint could not
	// verify (invalid_encrypted_content), left out of every later
	// request (responses_learn.go).
	droppedReasoning sync.Map // block's hash → struct{}
	anyDropped       atomic.Bool
	// noSummary is set once the API refused a reasoning summary (an
	// organisation it has not verified): none is asked for.
	noSummary atomic.Bool
}

func (*responsesWire) home() providers.Provider { return homeRow("openai") }

func (*responsesWire) models(ctx context.Context, c *Client) ([]ServedModel, error) {
	return c.chatModels(ctx)
}

func (*responsesWire) get(ctx context.Context, c *Client, u string) (*http.Response, error) {
	return c.sideRequest(ctx, http.MethodGet, u, nil)
}

func (*responsesWire) notAPI(ctx context.Context, c *Client, where string) string {
	return c.notAnAPISentence(ctx, where)
}

// learn leaves out, from now on, a strict schema the endpoint refused,
// the reasoning items of a request the endpoint could not verify, and
// the reasoning summary of an organisation the API does not give one
// (responses_learn.go).
func (w *responsesWire) learn(c *Client, req Request, f *failure, _ func(Delta)) bool {
	return w.schema.learn(req, f) || w.learnUnverified(c, req, f) || w.learnNoSummary(f)
}

func (*responsesWire) surelyKey() bool { return false }

func (*responsesWire) webSearch(model string) error {
	if providers.SearchesOnResponses(model) {
		return nil
	}
	return fmt.Errorf("%w to %s: on OpenAI's Responses API only the GPT-5 family and the o-series search the web themselves, and ralph has no search engine of its own", ErrNoWebSearch, model)
}

// warm builds the codecs of the Responses API's request and stream
// events, as warmChat does chat's.
func (w *responsesWire) warm() {
	c := &Client{wire: w}
	_, _ = w.body(c, Request{Model: "gpt-5", CacheKey: "k", Messages: []conversation.Message{
		{Role: conversation.RoleSystem, Content: "s"}, {Role: conversation.RoleUser, Content: "u"},
		{Role: conversation.RoleAssistant, Content: "a", ToolCalls: []conversation.ToolCall{{ID: "i", Name: "n", Arguments: "{}"}}},
		{Role: conversation.RoleTool, ToolCallID: "i", Content: "o"},
	}, Tools: []conversation.ToolDef{{Name: "n", Description: "d", Parameters: json.RawMessage(`{}`)}}})
	for _, ev := range []string{
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"m","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"m","output_index":0,"content_index":0,"delta":"h"}`,
		`{"type":"response.completed","sequence_number":3,"response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},"output_tokens":1,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":2}}}`,
	} {
		var e responsesEvent
		_ = json.Unmarshal([]byte(ev), &e)
	}
}

// responsesURL is the Responses API's endpoint at the base URL, which for
// OpenAI's protocol ends in /v1 (as chat completions' does).
func (c *Client) responsesURL() string { return c.cfg.BaseURL + "/responses" }

// newResponsesRequest is a streamed POST of body to the Responses API,
// with the key as a bearer token.
func (c *Client) newResponsesRequest(ctx context.Context, body []byte) (*http.Request, error) {
	u := c.responsesURL()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build the request to %s: %w", u, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	return req, nil
}

// attempt is one streamed request to the Responses API, assembled. fail and stalled are attempt's, so that its
// failures read as the other wires' do: an HTTP error through the tap
// (its body and limit headers), and response.failed or an error event as
// the slot's in-stream error, which the tap's line sniffing does not see
// (neither has a top-level "error" object).
func (w *responsesWire) attempt(ctx context.Context, c *Client, req Request, slot *attemptSlot, emit func(Delta),
	fail func(error) (Response, error), stalled *atomic.Bool) (Response, error) {
	body, err := w.body(c, req)
	if err != nil {
		return fail(err)
	}
	hr, err := c.newResponsesRequest(ctx, body)
	if err != nil {
		return fail(err)
	}
	resp, err := c.httpClient.Do(hr)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	turn := newResponsesTurn(emit, req)
	err = turn.read(resp.Body)
	switch {
	case errors.Is(err, errStreamError):
		slot.mu.Lock()
		if slot.streamErr == nil {
			se := turn.failure
			slot.streamErr = &se
		}
		slot.mu.Unlock()
		return fail(fmt.Errorf("%w: %w", ErrBrokenStream, err))
	case err != nil:
		if ctx.Err() != nil && !stalled.Load() {
			return Response{}, err
		}
		return fail(fmt.Errorf("%w: %w", ErrBrokenStream, err))
	case slot.inStream() != nil:
		return fail(fmt.Errorf("%w: %w", ErrBrokenStream, errStreamError))
	case !turn.done:
		return fail(fmt.Errorf("%w: the stream ended before response.completed", ErrBrokenStream))
	}
	out, err := turn.finish(c.opaqueProvider(), req.Model)
	if err != nil {
		return fail(err)
	}
	if !turn.sawUsage {
		out.Usage = estimateUsage(req, out.Message, out.Reasoning)
	}
	out.Constrained = req.Schema != nil
	return out, nil
}
