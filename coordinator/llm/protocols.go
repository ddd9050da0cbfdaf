package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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
// A protocol is chosen once, by wireFor when the Client is made (New),
// and the wire of each request from it by serving, for the request's
// model; no other code in this package asks which protocol it speaks
// (TestNoProtocolSwitchOutsideTheWireChoice). Each wire type holds its
// own protocol's state (what it has learnt of the endpoint, its tool
// cache); the Client holds what every wire shares. A further protocol
// (Gemini's native API) is one more type in files of its own and one
// more case in wireFor.
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
	// learn reports whether f is a refusal the client can mend from now
	// on (a field to leave out, another API for the model), and mends
	// it; emit says so to the person when it is worth a line.
	learn(c *Client, req Request, f *failure, emit func(Delta)) bool
	// surelyKey reports whether the key's variable is known for certain
	// when the configuration names none: the protocol's own provider's,
	// rather than any of the many servers that speak it.
	surelyKey() bool
	// webSearch is nil when model has the provider's own web search on
	// this protocol, else the one sentence that says why not.
	webSearch(model string) error
	// serving is the wire that carries the requests for model: this
	// one, or for OpenAI's protocol its other API (chatWire.serving).
	serving(c *Client, model string) wire
	// warm builds, once per process, the codecs of this wire's request
	// and stream (Warm).
	warm()
}

// wireFor is the one choice of a protocol: providers.ProtocolAnthropic is
// Anthropic's Messages API, ProtocolResponses OpenAI's Responses API for
// every request, anything else ("" or ProtocolOpenAI) OpenAI's protocol,
// whose requests go to chat completions or the Responses API by model
// (chatWire.serving). Each call makes fresh wires, with nothing learnt:
// a wire's state is its client's.
func wireFor(protocol string) wire {
	switch protocol {
	case providers.ProtocolAnthropic:
		return &messagesWire{}
	case providers.ProtocolResponses:
		return &responsesWire{}
	}
	return &chatWire{other: &responsesWire{}}
}

// wireOf is the wire of a request for model: the protocol's, or the
// other API of OpenAI's protocol that serves model.
func (c *Client) wireOf(model string) wire { return c.wire.serving(c, model) }

// homeRow is the provider row called name; the table has it (TestWireHomes).
func homeRow(name string) providers.Provider {
	p, _ := providers.Named(name)
	return p
}

// learn moves a model that chat completions refused as served only on
// the Responses API there, unless the configuration holds it to chat
// completions; else it learns the fields the endpoint refuses (learn.go).
func (w *chatWire) learn(c *Client, req Request, f *failure, emit func(Delta)) bool {
	if (f.status == 400 || f.status == 404) && responsesOnlyRe().MatchString(f.server.message) {
		if c.heldToChat() {
			return false
		}
		if _, known := w.onResponses.LoadOrStore(req.Model, struct{}{}); !known {
			emit(Delta{Notice: fmt.Sprintf("%s is served only on OpenAI's Responses API; ralph uses it from now on (set wire = %q in the config to start there)",
				req.Model, providers.WireResponses)})
		}
		return true
	}
	return w.learnFields(c, req, f)
}

// serving is the Responses API for the models it serves (the models
// OpenAI serves only there, and on OpenAI's own endpoint its reasoning
// models: providers.Wire, as the configuration's wire says), and for a
// model chat completions refused as served only there (learn); chat
// completions for every other.
func (w *chatWire) serving(c *Client, model string) wire {
	if providers.Wire(c.cfg.BaseURL, model, c.cfg.Wire) == providers.WireResponses {
		return w.other
	}
	if _, moved := w.onResponses.Load(model); moved && !c.heldToChat() {
		return w.other
	}
	return w
}

func (w *responsesWire) serving(*Client, string) wire { return w }

func (w *messagesWire) serving(*Client, string) wire { return w }

// heldToChat reports a configuration that names chat completions as the
// wire (wire = "chat"): no model is moved to the Responses API.
func (c *Client) heldToChat() bool {
	return strings.EqualFold(strings.TrimSpace(c.cfg.Wire), providers.WireChat)
}

// responsesFix is what a person does about a model chat completions
// refused as served only on the Responses API (errtable.go).
func (c *Client) responsesFix() string {
	if c.heldToChat() {
		return fmt.Sprintf("the config's wire = %q holds ralph to chat completions: set wire = %q (or %q) in the config", providers.WireChat, providers.WireResponses, providers.WireAuto)
	}
	return fmt.Sprintf("set wire = %q in the config", providers.WireResponses)
}

// servesResponses reports whether a session of protocol at baseURL asks
// model on OpenAI's Responses API first (Warm's question): the choice
// wireFor and the chat wire make, asked before there is a Client.
func servesResponses(protocol, baseURL, model, wire string) bool {
	return protocol != providers.ProtocolAnthropic && providers.Wire(baseURL, model, wire) == providers.WireResponses
}

// firstWire is the wire a session of protocol at baseURL asks model on
// first (Warm's question): the choice wireFor and the chat wire make,
// asked before there is a Client.
func firstWire(protocol, baseURL, model, wire string) wire {
	if servesResponses(protocol, baseURL, model, wire) {
		return &responsesWire{}
	}
	return wireFor(protocol)
}
