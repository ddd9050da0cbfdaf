package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/text"
)

// The request body of the Messages API, built so that it is the same bytes
// turn after turn for the same conversation: struct fields in a fixed
// order, no maps, the tools encoded once per set (tools.go), and the
// messages last, so that a request's body up to the end of the previous
// request's messages is that request's body, cache markers aside. That
// stable prefix is what Anthropic's prompt cache reads (see breakpoints).

// messagesRequest is POST /v1/messages' body.
type messagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	Thinking  *thinkingOption `json:"thinking,omitempty"`
	System    []mBlock        `json:"system,omitempty"`
	Tools     json.RawMessage `json:"tools,omitempty"`
	// ToolChoice forces the answer tool (Request.Answer); nil leaves the
	// API's default, auto.
	ToolChoice *toolChoice `json:"tool_choice,omitempty"`
	Messages   []mMessage  `json:"messages"`
}

// toolChoice is {"type":"tool","name":…}: the answer must call that tool.
type toolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type thinkingOption struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type mMessage struct {
	Role    string   `json:"role"`
	Content []mBlock `json:"content"`
}

// cacheControl marks a cache breakpoint: the prompt up to and including
// the marked block is cached, for five minutes from its last use.
type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// mBlock is one content block. A block of the server's own (a thinking
// block kept in Message.Opaque) goes back as raw, byte for byte; the
// others are text, tool_use and tool_result, cache_control last.
type mBlock struct {
	raw json.RawMessage

	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      string          `json:"content,omitempty"`
	Source       *imageSource    `json:"source,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
	// blocks, when set, is a tool_result's content as blocks (its text
	// and its images) instead of Content's string.
	blocks []mBlock
}

// MarshalJSON sends a raw block as it came, and a tool_result with
// images with its content as blocks.
func (b mBlock) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	if b.blocks != nil {
		return json.Marshal(struct {
			Type         string        `json:"type"`
			ToolUseID    string        `json:"tool_use_id"`
			Content      []mBlock      `json:"content"`
			CacheControl *cacheControl `json:"cache_control,omitempty"`
		}{b.Type, b.ToolUseID, b.blocks, b.CacheControl})
	}
	type plain mBlock
	return json.Marshal(plain(b))
}

// messagesTool is a tool as the Messages API takes it.
type messagesTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// messagesTools is defs for the Messages API, the last one a cache
// breakpoint: the tools come first in the prompt and change least.
func messagesTools(defs []conversation.ToolDef) any {
	tools := make([]messagesTool, len(defs))
	for i, d := range defs {
		tools[i] = messagesTool{Name: d.Name, Description: d.Description, InputSchema: toolSchema(d)}
	}
	if n := len(tools); n > 0 {
		tools[n-1].CacheControl = ephemeral
	}
	return tools
}

// Output limits. The Messages API requires max_tokens; ralph asks for a
// generous share of what each model may write when the person set no
// limit (providers.OutputLimit), since the answer is billed by what is
// written, not by the limit. The budget of extended thinking counts
// against max_tokens and must stay below it; Anthropic refuses budgets
// under minThinkingTokens, and a max_tokens above the model's own limit.
const (
	minThinkingTokens = 1024
	defaultMaxTokens  = providers.DefaultOutputTokens
)

// outputLimit is model's default max_tokens and the most it takes.
func outputLimit(model string) (def, limit int) { return providers.OutputLimit(model) }

// tokenLimits are max_tokens and the thinking budget (0: no thinking) of
// a request to model: the person's output limit, or the model's default,
// with the thinking budget on top when the limit would not exceed it,
// both within what the model takes.
func (c *Client) tokenLimits(model string, thinking bool) (maxTokens, budget int) {
	def, limit := outputLimit(model)
	maxTokens = c.cfg.MaxOutputTokens
	if maxTokens <= 0 {
		maxTokens = def
	}
	if thinking && c.cfg.ThinkingTokens > 0 {
		budget = max(c.cfg.ThinkingTokens, minThinkingTokens)
		if maxTokens <= budget {
			// The limit the person set is for the answer; thinking
			// comes on top of it.
			maxTokens += budget
		}
	}
	if limit > 0 && maxTokens > limit {
		maxTokens = limit
		if budget >= maxTokens {
			budget = max(maxTokens-def/4, minThinkingTokens)
		}
	}
	return maxTokens, budget
}

// body builds the request for req (messagesRequest above).
func (w *messagesWire) body(c *Client, req Request) ([]byte, error) {
	body := messagesRequest{Model: req.Model, Stream: true}
	body.System, body.Messages = c.messagesOf(shownImages(req.Messages, AcceptsImages(req.Model)))
	var budget int
	// Anthropic refuses a forced tool_choice with extended thinking
	// ("Thinking may not be enabled when tool_choice forces tool use."):
	// the request that asks for the answer goes without it.
	answer := req.Answer && req.Schema != nil
	body.MaxTokens, budget = c.tokenLimits(req.Model, thinkingFits(body.Messages) && !answer)
	if budget > 0 {
		body.Thinking = &thinkingOption{Type: "enabled", BudgetTokens: budget}
	}
	if len(req.Tools) > 0 {
		tools, err := w.tools.encodedWith(req.Tools, messagesTools)
		if err != nil {
			return nil, err
		}
		body.Tools = tools
	}
	if c.webSearch(req) {
		tools, err := withSearchTool(body.Tools)
		if err != nil {
			return nil, err
		}
		body.Tools = tools
	}
	if answer {
		tools, err := withAnswerTool(body.Tools, req.Schema)
		if err != nil {
			return nil, err
		}
		body.Tools, body.ToolChoice = tools, &toolChoice{Type: "tool", Name: AnswerTool}
	}
	if n := len(body.System); n > 0 {
		body.System[n-1].CacheControl = ephemeral
	}
	breakpoints(body.Messages)
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	return data, nil
}

// breakpoints puts the conversation's two cache breakpoints (with the
// tools' and the system prompt's, the four a request may have): on the
// last block of this request, which the next request will read from the
// cache, and on the last block of the previous request, the user message
// before this request's last assistant turn, which this request reads.
// The cache looks back only about 20 blocks from a breakpoint for an
// entry to read, and one turn of many tool calls adds more than that, so
// the previous request's end is marked again rather than left to be
// found. Both are found from the messages alone, so a conversation
// continued in another process (-c) marks the same blocks.
func breakpoints(msgs []mMessage) {
	n := len(msgs)
	if n == 0 {
		return
	}
	mark(&msgs[n-1])
	for i := n - 1; i > 0; i-- {
		if msgs[i].Role == conversation.RoleAssistant {
			if msgs[i-1].Role == conversation.RoleUser {
				mark(&msgs[i-1])
			}
			return
		}
	}
}

// mark makes a message's last block that can carry one a breakpoint.
func mark(m *mMessage) {
	for i := len(m.Content) - 1; i >= 0; i-- {
		if m.Content[i].raw == nil {
			m.Content[i].CacheControl = ephemeral
			return
		}
	}
}

// opaqueProvider is the provider whose opaque blocks this client keeps
// and sends back: the configuration's, else the protocol's own.
func (c *Client) opaqueProvider() string {
	if c.cfg.Provider != "" {
		return c.cfg.Provider
	}
	return c.wire.home().Name
}

// messagesOf is the conversation as the Messages API takes it, after the
// rules every server gets (sendable: an empty assistant turn and a
// refused message are left out, consecutive turns of one role merged):
//
//   - The system messages before the conversation are the top-level
//     system field; one later in the conversation goes as a user's text.
//   - A turn's tool results are tool_result blocks in one user message
//     right after the assistant's tool_use turn, and a user's text queued
//     meanwhile follows them in that message, as the API requires.
//   - Consecutive messages of one role are merged into one.
//   - An assistant turn's opaque blocks of this client's provider (its
//     thinking and signatures) go back first in its content, unchanged;
//     another provider's are left out.
//   - Tool-call arguments that are not a JSON object go as {}, with a
//     note in the turn's text, as the API refuses anything else.
//   - Empty text is left out, as the API refuses an empty text block.
func (c *Client) messagesOf(history []conversation.Message) ([]mBlock, []mMessage) {
	var system []mBlock
	var out []mMessage
	provider := c.opaqueProvider()
	add := func(role string, blocks []mBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			last := &out[n-1]
			if role == conversation.RoleUser && blocks[0].Type == "tool_result" {
				// Tool results lead the user's message.
				last.Content = append(leadingResults(last.Content, blocks), trailingText(last.Content)...)
				return
			}
			if role == conversation.RoleAssistant {
				// Thinking leads an assistant turn, as the API requires.
				last.Content = append(append(rawBlocks(last.Content, true), rawBlocks(blocks, true)...),
					append(rawBlocks(last.Content, false), rawBlocks(blocks, false)...)...)
				return
			}
			last.Content = append(last.Content, blocks...)
			return
		}
		out = append(out, mMessage{Role: role, Content: blocks})
	}
	for _, m := range history {
		if m.Empty() || m.Refused != "" {
			// Left out as sendable leaves them out (wire.go), whose
			// merging add does here, keeping each turn's opaque blocks.
			continue
		}
		switch m.Role {
		case conversation.RoleSystem:
			if len(out) == 0 {
				if b, ok := textBlock(m.Content); ok {
					system = append(system, b)
				}
				continue
			}
			add(conversation.RoleUser, textBlocks(m.Content))
		case conversation.RoleTool:
			result := mBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}
			if len(m.Images) > 0 {
				// The images go inside the result, where the model reads
				// them as what the call returned.
				result.blocks = textBlocks(m.Content)
				for _, img := range m.Images {
					result.blocks = append(result.blocks, imageBlock(img))
				}
			}
			add(conversation.RoleUser, []mBlock{result})
		case conversation.RoleAssistant:
			add(conversation.RoleAssistant, assistantBlocks(m, provider))
		default:
			blocks := textBlocks(m.Content)
			for _, img := range m.Images {
				blocks = append(blocks, imageBlock(img))
			}
			add(conversation.RoleUser, blocks)
		}
	}
	return system, out
}

// leadingResults and trailingText order a user message's blocks with the
// tool results first: have is the message so far, more the new results.
func leadingResults(have, more []mBlock) []mBlock {
	var out []mBlock
	for _, b := range have {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return append(out, more...)
}

func trailingText(have []mBlock) []mBlock {
	var out []mBlock
	for _, b := range have {
		if b.Type != "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// thinkingFits reports whether extended thinking may be on for msgs: with
// thinking on, the API requires the last assistant turn, when it called
// tools, to begin with its thinking, and refuses the request otherwise. A
// turn written with thinking off, or by another provider (a fallback
// model), has none, so the request that sends its tool results goes
// without thinking; the next turn thinks again.
func thinkingFits(msgs []mMessage) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != conversation.RoleAssistant {
			continue
		}
		uses := false
		for _, b := range m.Content {
			uses = uses || b.Type == "tool_use"
		}
		return !uses || (len(m.Content) > 0 && m.Content[0].raw != nil)
	}
	return true
}

// rawBlocks is the opaque blocks of blocks (raw), or the others.
func rawBlocks(blocks []mBlock, raw bool) []mBlock {
	var out []mBlock
	for _, b := range blocks {
		if (b.raw != nil) == raw {
			out = append(out, b)
		}
	}
	return out
}

func textBlock(s string) (mBlock, bool) {
	if strings.TrimSpace(s) == "" {
		return mBlock{}, false
	}
	return mBlock{Type: "text", Text: s}, true
}

func textBlocks(s string) []mBlock {
	if b, ok := textBlock(s); ok {
		return []mBlock{b}
	}
	return nil
}

// assistantBlocks is an assistant turn's content: its opaque blocks of
// provider that are the Messages API's own, its text, and its tool calls.
func assistantBlocks(m conversation.Message, provider string) []mBlock {
	var blocks []mBlock
	for _, o := range m.Opaque {
		if o.Provider == provider && thinkingBlock(o.Block) {
			blocks = append(blocks, mBlock{raw: o.Block})
		}
	}
	content := m.Content
	var uses []mBlock
	for _, tc := range m.ToolCalls {
		input, ok := objectArguments(tc.Arguments)
		if !ok {
			content = joinTurns(content, fmt.Sprintf("(The arguments of my call %s of %s were not valid JSON and were sent as {}: %s)",
				tc.ID, tc.Name, text.Clip(strings.TrimSpace(tc.Arguments), 200)))
		}
		uses = append(uses, mBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
	}
	blocks = append(blocks, textBlocks(content)...)
	return append(blocks, uses...)
}

// thinkingBlock reports an opaque block the Messages API wrote (a
// thinking or redacted_thinking block, messagesTurn.finish). Another
// wire's blocks (Gemini's signatures, the Responses API's reasoning)
// carry no such type and never go to this API, even where one provider
// name marks both (an endpoint known by its URL only).
func thinkingBlock(raw json.RawMessage) bool {
	var b struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(raw, &b) == nil && (b.Type == "thinking" || b.Type == "redacted_thinking")
}

// objectArguments is a tool call's arguments as the tool_use block's
// input, a JSON object; ok is false when they were not one and {} stands
// in for them. No arguments at all are {} too, and fine.
func objectArguments(args string) (json.RawMessage, bool) {
	s := strings.TrimSpace(args)
	if s == "" {
		return json.RawMessage(`{}`), true
	}
	if s[0] == '{' && json.Valid([]byte(s)) {
		return json.RawMessage(s), true
	}
	return json.RawMessage(`{}`), false
}

// withAnswerTool is a request's encoded tools with the answer tool last:
// the tool whose input is the final answer, its input schema the output
// schema (Request.Answer).
func withAnswerTool(tools json.RawMessage, sc *OutputSchema) (json.RawMessage, error) {
	// The schema as the person gave it: Anthropic has no strict form.
	input := sc.Schema
	if sc.Given != nil {
		input = sc.Given
	}
	at, err := json.Marshal(messagesTool{Name: AnswerTool, InputSchema: input,
		Description: "Give your final answer with this tool: its input is the answer, in the JSON the output schema requires."})
	if err != nil {
		return nil, fmt.Errorf("encode the answer tool: %w", err)
	}
	rest := bytes.TrimSpace(tools)
	if len(rest) < 2 || string(rest) == "null" || string(rest) == "[]" {
		return append(append([]byte{'['}, at...), ']'), nil
	}
	out := make([]byte, 0, len(rest)+len(at)+1)
	out = append(out, rest[:len(rest)-1]...)
	return append(append(append(out, ','), at...), ']'), nil
}

// answerOf is a turn that called the answer tool as the answer: its
// input as the text, and no tool call.
func answerOf(out Response) Response {
	for i, call := range out.Message.ToolCalls {
		if call.Name != AnswerTool {
			continue
		}
		out.Message.Content = call.Arguments
		out.Message.ToolCalls = append(out.Message.ToolCalls[:i:i], out.Message.ToolCalls[i+1:]...)
		if len(out.Message.ToolCalls) == 0 {
			out.Message.ToolCalls = nil
		}
		out.Constrained = true
		if out.FinishReason == "tool_calls" {
			out.FinishReason = "stop"
		}
		return out
	}
	return out
}
