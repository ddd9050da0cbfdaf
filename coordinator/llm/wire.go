package llm

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	openai "github.com/sashabaranov/go-openai"
)

// chatWire is OpenAI's chat completions (POST {base}/chat/completions),
// through go-openai (attempt.go, this file, learn.go), with what it has
// learnt of the endpoint. Its requests for a model served on OpenAI's
// Responses API go there instead (serving, protocols.go).
type chatWire struct {
	// oa is go-openai's client on the Client's endpoint and transport,
	// made at the first request (openAI).
	oa     *openai.Client
	oaOnce sync.Once
	// What this endpoint refuses, learnt from its 400s and remembered for
	// the rest of the process (learn.go): some servers reject
	// stream_options, some the name of a tool message, some a schema's
	// strict form.
	noStreamOptions atomic.Bool
	noToolName      atomic.Bool
	schema          looseSchema
	// tokensField is which field carries MaxOutputTokens (below).
	tokensField atomic.Int32
	// tools keeps the encoded tool definitions (tools.go).
	tools toolCache
	// onResponses holds the models chat completions refused as served
	// only on the Responses API, which this wire sends there from then
	// on (protocols.go).
	onResponses sync.Map // model → struct{}
	// other is OpenAI's other API at the same endpoint (the Responses
	// API), which serving chooses for some models: the wire choice sets
	// it (protocols.go).
	other wire
}

func (*chatWire) home() providers.Provider { return homeRow("openai") }

func (w *chatWire) models(ctx context.Context, c *Client) ([]ServedModel, error) {
	return c.chatModels(ctx)
}

func (*chatWire) get(ctx context.Context, c *Client, u string) (*http.Response, error) {
	return c.sideRequest(ctx, http.MethodGet, u, nil)
}

func (*chatWire) notAPI(ctx context.Context, c *Client, where string) string {
	return c.notAnAPISentence(ctx, where)
}

func (*chatWire) surelyKey() bool { return false }

func (*chatWire) webSearch(model string) error { return openAIWebSearch(model) }

func (*chatWire) warm() { warmChat() }

// openAI is go-openai's client for c's endpoint, made once: a client
// that never sends a chat request (one of the other protocols) builds
// none.
func (w *chatWire) openAI(c *Client) *openai.Client {
	w.oaOnce.Do(func() {
		oc := openai.DefaultConfig(c.cfg.APIKey)
		oc.BaseURL = c.cfg.BaseURL
		oc.HTTPClient = c.httpClient
		// OpenRouter sends ": OPENROUTER PROCESSING" comments while a
		// request queues; go-openai counts each as an empty message and
		// gives up after 300 of them, which a long queue reaches.
		// Silence is the idle watchdog's business.
		oc.EmptyMessagesLimit = 1 << 30
		w.oa = openai.NewClientWithConfig(oc)
	})
	return w.oa
}

// sendable is the conversation as every server accepts it. The saved
// history may hold what some servers refuse; only the request is changed:
//
//   - An assistant message without content or tool calls is left out. The
//     chat API requires content when there are no tool calls; Ollama's /v1
//     layer refuses one with HTTP 400 "invalid message content type: <nil>"
//     ("content is only optional if tool calls are present", its
//     openai/openai.go), and would on every later request.
//   - Consecutive user messages (a turn that failed or was stopped before
//     the model answered, then the next message; or the note FitContext
//     adds after the task) are merged into one, and so are consecutive
//     assistant messages without tool calls. Chat templates that require
//     alternation (Gemma's, older Mistral's) raise "Conversation roles must
//     alternate user/assistant/user/assistant/..." otherwise, which vLLM
//     answers with HTTP 400 and llama.cpp's server with 500.
//   - A user message the endpoint refused (Message.Refused) is left out:
//     sent again, it would be refused again, and merged with the next
//     message it would make that one fail too. A message whose request
//     failed otherwise (a network error, a 5xx, a 429, a stop) has no mark
//     and is merged with the next as above, so the person's text is kept.
func sendable(msgs []conversation.Message) []conversation.Message {
	out := make([]conversation.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Empty() || m.Refused != "" {
			continue
		}
		if n := len(out); n > 0 {
			last := &out[n-1]
			switch {
			case m.Role == conversation.RoleUser && last.Role == conversation.RoleUser:
				last.Content = joinTurns(last.Content, m.Content)
				last.Images = append(append([]conversation.Image(nil), last.Images...), m.Images...)
				continue
			case m.Role == conversation.RoleAssistant && last.Role == conversation.RoleAssistant && len(last.ToolCalls) == 0:
				last.Content = joinTurns(last.Content, m.Content)
				last.ToolCalls = m.ToolCalls
				// Both turns' opaque blocks are kept, the earlier first
				// (the Responses API's reasoning, responses_wire.go).
				last.Opaque = append(slices.Clip(last.Opaque), m.Opaque...)
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

func joinTurns(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// toOpenAI builds the wire request, without the fields this endpoint has
// refused.
func (w *chatWire) toOpenAI(c *Client, req Request) openai.ChatCompletionRequest {
	o := openai.ChatCompletionRequest{Model: req.Model, Stream: true}
	if !w.noStreamOptions.Load() {
		o.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	if n := c.cfg.MaxOutputTokens; n > 0 {
		if w.completionTokensField(c, req.Model) {
			o.MaxCompletionTokens = n
		} else {
			o.MaxTokens = n
		}
	}
	dropName := w.noToolName.Load()
	// A tool message carries text only: the images of a turn's tool
	// results wait for the end of the turn's results, and go in the user
	// message after them (the person's own, when one follows).
	var images []openai.ChatMessagePart
	for _, m := range sendable(shownImages(req.Messages, AcceptsImages(req.Model))) {
		if len(images) > 0 && m.Role != conversation.RoleTool && m.Role != conversation.RoleUser {
			o.Messages = append(o.Messages, openai.ChatCompletionMessage{Role: conversation.RoleUser, MultiContent: images})
			images = nil
		}
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		if dropName && m.Role == "tool" {
			om.Name = ""
		}
		switch {
		case m.Role == conversation.RoleTool:
			images = append(images, openAIImageParts(m)...)
		case m.Role == conversation.RoleUser && (len(images) > 0 || len(m.Images) > 0):
			om.MultiContent = append(images, userImageParts(m)...)
			om.Content, images = "", nil
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		o.Messages = append(o.Messages, om)
	}
	if len(images) > 0 {
		o.Messages = append(o.Messages, openai.ChatCompletionMessage{Role: conversation.RoleUser, MultiContent: images})
	}
	if req.Schema != nil {
		// OpenAI takes a schema beside tools: the turns that call tools
		// call them, and the final text is the schema's JSON.
		sc := w.schema.sent(req.Schema)
		o.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: sc.Name, Schema: sc.Schema, Strict: sc.Strict}}
		if req.Answer && len(req.Tools) > 0 {
			o.ToolChoice = "none"
		}
	}
	// The tools are not here: they are encoded once and added to the
	// request's body on its way out (tools.go).
	return o
}

// Which field carries the output limit. OpenAI deprecated max_tokens for
// max_completion_tokens, and its reasoning models (o1, o3, o4, gpt-5)
// refuse max_tokens ("Unsupported parameter: 'max_tokens' is not supported
// with this model. Use 'max_completion_tokens' instead."; go-openai refuses
// it for them before sending). Ollama's /v1 layer, LM Studio and older
// servers know only max_tokens, which every OpenAI-compatible server
// accepts; vLLM and llama.cpp's server take both. So max_completion_tokens
// goes to OpenAI itself and to those models, max_tokens elsewhere, and a
// 400 about either field switches to the other (learn.go).
const (
	tokensFieldDefault = iota
	tokensFieldCompletion
	tokensFieldMax
)

func (w *chatWire) completionTokensField(c *Client, model string) bool {
	switch w.tokensField.Load() {
	case tokensFieldCompletion:
		return true
	case tokensFieldMax:
		return false
	}
	return providers.TakesCompletionTokens(c.cfg.BaseURL, model)
}
