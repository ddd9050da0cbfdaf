// Package llm is ralph's client for OpenAI-compatible chat completion
// endpoints (OpenAI, Ollama, vLLM, LM Studio, llama.cpp server, OpenRouter).
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
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of a conversation, in the shape the OpenAI chat API
// uses; it is also the on-disk form of a saved conversation.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is one function call requested by the model. Arguments is the raw
// JSON text exactly as the model produced it, which may be invalid.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef describes a function the model may call.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Usage counts tokens as the endpoint reported them.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// Request is one chat completion request.
type Request struct {
	Model    string
	Messages []Message
	Tools    []ToolDef
}

// Response is one finished assistant turn.
type Response struct {
	Message      Message
	FinishReason string
	Usage        Usage
}

// Delta is a piece of a streaming answer, passed to the caller as it arrives.
type Delta struct {
	Text string
	// ToolName is set when the model starts a new tool call.
	ToolName string
	// Retry is set when an attempt failed and the call will be retried
	// after Retry.Wait; text already passed on for this turn is void.
	Retry *RetryInfo
}

// RetryInfo describes a retry the client is about to make, so faces can show
// it and discard any partial text of the failed attempt.
type RetryInfo struct {
	Attempt int           `json:"attempt"` // the attempt that failed, from 1
	Wait    time.Duration `json:"wait"`
	Reason  string        `json:"reason"`
}
