package llm

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/ralph-dev/ralph/memory/providers"
)

// wire is one wire protocol, as much of it as differs between protocols:
// how one attempt's request is built and its stream read, how the model
// list is asked for, what a base URL that is no API of this protocol is
// told, which refused fields a client may learn to leave out, and which
// provider row names its default endpoint and variables. Everything else
// (the retry loop, the error table, limit waits, the idle watchdog, the
// tap) is the Client's and the same for every protocol.
//
// A protocol is chosen once, by wireFor when the Client is made (New); no
// other code in this package asks which protocol it speaks
// (TestNoProtocolSwitchOutsideTheWireChoice). A third protocol (Gemini's
// native API, OpenAI's Responses API) is one more type here and one more
// case in wireFor.
type wire interface {
	// home is the provider row whose protocol this is: the endpoint a
	// client naming none gets, and the variables a sentence names for
	// its key and its endpoint.
	home() providers.Provider
	// attempt makes one streaming request and assembles the answer;
	// fail and stalled are Client.attempt's, so that every protocol's
	// failures read alike to the error table.
	attempt(ctx context.Context, c *Client, req Request, slot *attemptSlot, emit func(Delta),
		fail func(error) (Response, error), stalled *atomic.Bool) (Response, error)
	// models lists the models the endpoint serves, unsorted.
	models(ctx context.Context, c *Client) ([]ServedModel, error)
	// get is a side request (a model list) with this protocol's headers.
	get(ctx context.Context, c *Client, u string) (*http.Response, error)
	// notAPI explains a base URL that leads to no API of this protocol.
	notAPI(ctx context.Context, c *Client, where string) string
	// learn reports whether f is a refusal of a field the client can
	// leave out from now on, and leaves it out.
	learn(c *Client, req Request, f *failure) bool
	// surelyKey reports whether the key's variable is known for certain
	// when the configuration names none: the protocol's own provider's,
	// rather than any of the many servers that speak it.
	surelyKey() bool
	// webSearch is nil when model has the provider's own web search on
	// this protocol, else the one sentence that says why not.
	webSearch(model string) error
}

// wireFor is the one choice of a protocol: providers.ProtocolAnthropic is
// Anthropic's Messages API, anything else ("" or ProtocolOpenAI) OpenAI's
// chat completions.
func wireFor(protocol string) wire {
	if protocol == providers.ProtocolAnthropic {
		return messagesWire{}
	}
	return chatWire{}
}

// homeRow is the provider row called name; the table has it (TestWireHomes).
func homeRow(name string) providers.Provider {
	p, _ := providers.Named(name)
	return p
}

// chatWire is OpenAI's chat completions (POST {base}/chat/completions),
// through go-openai (attempt.go, wire.go, learn.go).
type chatWire struct{}

func (chatWire) home() providers.Provider { return homeRow("openai") }

func (chatWire) attempt(ctx context.Context, c *Client, req Request, slot *attemptSlot, emit func(Delta),
	fail func(error) (Response, error), stalled *atomic.Bool) (Response, error) {
	return c.attemptChat(ctx, req, slot, emit, fail, stalled)
}

func (chatWire) models(ctx context.Context, c *Client) ([]ServedModel, error) {
	return c.chatModels(ctx)
}

func (chatWire) get(ctx context.Context, c *Client, u string) (*http.Response, error) {
	return c.sideRequest(ctx, http.MethodGet, u, nil)
}

func (chatWire) notAPI(ctx context.Context, c *Client, where string) string {
	return c.notAnAPISentence(ctx, where)
}

func (chatWire) learn(c *Client, req Request, f *failure) bool { return c.learn(req, f) }

func (chatWire) surelyKey() bool { return false }

func (chatWire) webSearch(model string) error { return openAIWebSearch(model) }

// messagesWire is Anthropic's Messages API (POST {base}/v1/messages),
// ralph's own small client (messages*.go).
type messagesWire struct{}

func (messagesWire) home() providers.Provider { return homeRow("anthropic") }

func (messagesWire) attempt(ctx context.Context, c *Client, req Request, slot *attemptSlot, emit func(Delta),
	fail func(error) (Response, error), stalled *atomic.Bool) (Response, error) {
	return c.attemptMessages(ctx, req, slot, emit, fail, stalled)
}

func (messagesWire) models(ctx context.Context, c *Client) ([]ServedModel, error) {
	return c.messagesModels(ctx)
}

func (messagesWire) get(ctx context.Context, c *Client, u string) (*http.Response, error) {
	req, err := c.newMessagesRequest(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return c.httpClient.Do(req)
}

func (messagesWire) notAPI(_ context.Context, c *Client, where string) string {
	return c.notMessagesSentence(where)
}

// learn learns nothing: the Messages API's schema is one, and a field it
// refuses is ralph's mistake to fix, not the server's dialect.
func (messagesWire) learn(*Client, Request, *failure) bool { return false }

func (messagesWire) surelyKey() bool { return true }

// webSearch is always offered: the Messages API's web_search server tool
// serves every current model.
func (messagesWire) webSearch(string) error { return nil }
