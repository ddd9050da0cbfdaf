// Package conversation holds the types of a conversation with a model:
// messages, tool calls, tool definitions and token usage. They are ralph's
// own, in the shape the OpenAI chat API uses, and they are the on-disk form
// of a saved conversation; this leaf package lets memory persist them
// without depending on the HTTP client.
package conversation

import "encoding/json"

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
	// Refused is the endpoint's reason when it refused the request that
	// ended with this user message (HTTP 400, 413 or 422, a content
	// filter, a context-length error). Requests leave such a message out,
	// so one refusal does not make every later request fail the same way;
	// the transcript keeps it.
	Refused string `json:"refused,omitempty"`
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

// Usage counts tokens as the endpoint reported them. Estimated marks
// counts in which ralph had to estimate what an endpoint did not report.
// ReasoningTokens is the part of OutputTokens a thinking model spent
// reasoning, where the endpoint says (completion_tokens_details).
type Usage struct {
	InputTokens     int  `json:"input_tokens"`
	OutputTokens    int  `json:"output_tokens"`
	ReasoningTokens int  `json:"reasoning_tokens,omitempty"`
	Estimated       bool `json:"estimated,omitempty"`
}

// Add returns the sum of two usages; the sum is an estimate when either is.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		ReasoningTokens: u.ReasoningTokens + o.ReasoningTokens, Estimated: u.Estimated || o.Estimated}
}

// Sub returns what u counts beyond an earlier count o of the same tokens
// (a session's usage less what it had when a run began); it is an estimate
// when u is.
func (u Usage) Sub(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens - o.InputTokens, OutputTokens: u.OutputTokens - o.OutputTokens,
		ReasoningTokens: u.ReasoningTokens - o.ReasoningTokens, Estimated: u.Estimated}
}

// Empty reports an assistant message that says nothing: no text and no
// tool calls (a reasoning-only turn, a model that stopped at once, a tool
// call the server's parser dropped). The chat API requires content when
// there are no tool calls, and Ollama refuses such a message with HTTP 400
// "invalid message content type: <nil>" on every later request, so one
// must never be sent, and ralph does not keep one.
func (m Message) Empty() bool {
	return m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0
}

// IsRefusalMark reports whether m is the line messages.jsonl gets when a
// request was refused: no text of its own, it marks the user messages
// just before it as refused. The file is only ever appended to, so the
// mark comes after the message it is about.
func (m Message) IsRefusalMark() bool {
	return m.Role == RoleUser && m.Refused != "" && m.Content == "" && len(m.ToolCalls) == 0
}

// RefusalMark is the line that marks the messages before it as refused.
func RefusalMark(reason string) Message { return Message{Role: RoleUser, Refused: reason} }

// MarkRefused marks the user messages at the end of msgs, the turn the
// endpoint refused, with reason, and reports how many it marked. A
// conversation that ends in an answer or a tool result has no such turn:
// a refusal there is not of a person's message, and nothing is marked.
func MarkRefused(msgs []Message, reason string) int {
	n := 0
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == RoleUser && msgs[i].Refused == ""; i-- {
		msgs[i].Refused = reason
		n++
	}
	return n
}

// ApplyRefusalMarks gives the messages before each refusal mark their
// reason and drops the marks, as a saved conversation is read back.
func ApplyRefusalMarks(msgs []Message) []Message {
	out := msgs[:0:0]
	for _, m := range msgs {
		if m.IsRefusalMark() {
			MarkRefused(out, m.Refused)
			continue
		}
		out = append(out, m)
	}
	return out
}

// EstimateTokens approximates a message's token count without a
// tokenizer: about one token per 3.5 bytes of English and code, rounded up,
// plus a few tokens of per-message framing. It errs on the high side so a
// request fitted to a budget does not overflow the real window.
func EstimateTokens(m Message) int {
	n := len(m.Content)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments) + 12
	}
	return EstimateBytes(n)
}

// EstimateBytes is EstimateTokens for n bytes of prompt text in one framed
// part, for callers that can count bytes without building a message.
func EstimateBytes(n int) int {
	return (n*2+6)/7 + 6
}
