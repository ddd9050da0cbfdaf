// Package llm is ralph's client for OpenAI-compatible chat completion
// endpoints (OpenAI, Ollama, vLLM, LM Studio, llama.cpp server, OpenRouter),
// for OpenAI's Responses API (responses.go), which OpenAI's protocol
// chooses per model, and for Anthropic's Messages API (messages.go), one
// Client for all three.
//
// It wraps go-openai's streaming API with what an agent needs and the
// library leaves to callers: tool-call fragments assembled by index, token
// usage, bounded retries that honour Retry-After, an idle timeout between
// chunks, detection of streams that break off, and errors that say in one
// sentence what went wrong and how to fix it. Its message types are ralph's
// own so that transcripts do not depend on the wire library's field set.
package llm

import (
	"encoding/json"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Request is one chat completion request.
type Request struct {
	Model    string
	Messages []conversation.Message
	Tools    []conversation.ToolDef
	// Faces, when set, offers the tools to the model that answers as its
	// family was trained on them; Tools and Messages are in ralph's own
	// terms. Nil sends them as they are.
	Faces ToolFaces
	// CacheKey names the conversation to the endpoint's prompt cache (the
	// Responses API's prompt_cache_key), so that its requests meet the
	// same cached prefix: the session's id. "" sends none.
	CacheKey string
	// NoWebSearch leaves the provider's web_search out of this request
	// where the client offers it (Config.WebSearch): an agent whose
	// definition's tools do not name WebSearch, a prompt hook's question.
	NoWebSearch bool
	// Schema, when set, is the JSON Schema the final answer must conform
	// to (--output-schema): sent as the provider's structured-output mode
	// where the wire has one beside tools (chat completions'
	// response_format, the Responses API's text.format), on every request,
	// so the model's final text is the schema's JSON (Response.Constrained).
	Schema *OutputSchema
	// Answer asks for the final answer in Schema now, with no tool call:
	// on the Messages API a forced call of AnswerTool, whose input is the
	// answer, with thinking off for the request (Anthropic refuses a
	// forced tool_choice with extended thinking); on OpenAI's wires
	// tool_choice "none". The answer comes back as the message's text.
	Answer bool
}

// OutputSchema is a JSON Schema a request's answer must conform to.
type OutputSchema struct {
	// Name is the schema's name on the wire (OpenAI requires one).
	Name string
	// Schema is the JSON Schema as it is sent.
	Schema json.RawMessage
	// Strict turns OpenAI's strict mode on: Schema is then in the form
	// strict mode requires (every property required, no additional ones).
	Strict bool
	// Given is the schema as the person gave it, sent with strict off
	// once the endpoint refused the strict form (looseSchema.learn, learn.go).
	Given json.RawMessage
}

// AnswerTool is the tool whose input is the final answer on the Messages
// API (Request.Answer), under the name Claude Code gives its own.
const AnswerTool = "StructuredOutput"

// ToolFaces is how a model is offered ralph's tools: under the names,
// descriptions and input shapes its family was trained on (Claude Code's
// for Anthropic's models, codex's for OpenAI's). ralph keeps one
// (canonical) name per tool in the conversation, its events, hooks,
// approvals and records; the client turns a request into the answering
// model's terms just before it is sent (Offer), and the tool calls of the
// answer back into ralph's (Canonical), for whichever model answers, a
// fallback model of another family too. *tools.Faces implements it.
type ToolFaces interface {
	// Offer returns the tools as model is offered them and the
	// conversation with its tool calls and results in the same terms.
	// It must give the same output for the same input, turn after turn
	// (the endpoint caches the request's prefix), and leave its input
	// unchanged.
	Offer(model string, tools []conversation.ToolDef, msgs []conversation.Message) ([]conversation.ToolDef, []conversation.Message)
	// Canonical returns a call the model made, under any family's name,
	// as the call of ralph's tool with ralph's arguments; a call of no
	// known name is returned as it is.
	Canonical(model string, call conversation.ToolCall) conversation.ToolCall
}

// Response is one finished assistant turn.
type Response struct {
	Message      conversation.Message
	FinishReason string
	Usage        conversation.Usage
	// Reasoning is what a thinking model reasoned before its answer. It is
	// shown, never sent back: it is not part of Message.
	Reasoning string
	// Truncation is set when the server cut the prompt (Ollama cuts a
	// prompt longer than the context it serves silently), the first time
	// this client sees it.
	Truncation *Truncation
	// Model is the fallback model that answered, "" when the requested
	// one did.
	Model string
	// Constrained says the request carried Request.Schema as the
	// provider's structured-output mode, or asked for the Answer: the
	// text is the answer in the schema, not prose to be asked again.
	Constrained bool
	// read is the prompt tokens the server reported, 0 when it did not.
	read int
}

// Truncation describes a prompt the server cut.
type Truncation struct {
	Sent   int    // tokens sent, estimated
	Read   int    // prompt tokens the server reported
	Window int    // the context the server serves, 0 when unknown
	fix    string // how to give the model more context (Ollama), or ""
}

// Delta is a piece of a streaming answer, passed to the caller as it arrives.
type Delta struct {
	Text string
	// Reasoning is a piece of a thinking model's reasoning.
	Reasoning string
	// ToolName is set when the model starts a new tool call.
	ToolName string
	// Search is set when the provider ran a web search of its own
	// (websearch.go): ralph shows it, never runs it.
	Search *SearchInfo
	// Notice is one line the person should read once about how the
	// client now talks to the endpoint: a model that chat completions
	// refused as served only on OpenAI's Responses API, which the client
	// uses for it from then on (protocols.go).
	Notice string
	// Retry is set when an attempt failed and the call will be retried
	// after Retry.Wait; text already passed on for this turn is void.
	Retry *RetryInfo
	// Fallback is set when the turn goes to the next fallback model
	// (fallback.go); text already passed on for this turn is void.
	Fallback *FallbackInfo
	// Waiting is set while the endpoint sends nothing: how long it has
	// been silent, about once a second from Config.WaitNotice on, and a
	// zero Silent once data flows again.
	Waiting *WaitInfo
}

// WaitInfo describes a silence of the endpoint.
type WaitInfo struct {
	Silent time.Duration `json:"silent"`
	// Limit is how long the silence may last before the attempt is given
	// up, when it is longer than the idle timeout: a local model that has
	// not begun its answer (it may be reading a long prompt).
	Limit time.Duration `json:"limit,omitempty"`
	// Working: Ollama lists the model as loaded, so it is reading the
	// prompt, and ralph waits as long as Limit says.
	Working bool `json:"working,omitempty"`
}

// RetryInfo describes a retry the client is about to make, so faces can show
// it and discard any partial text of the failed attempt.
type RetryInfo struct {
	Attempt int           `json:"attempt"` // the attempt that failed, from 1
	Wait    time.Duration `json:"wait"`
	Reason  string        `json:"reason"`
}
