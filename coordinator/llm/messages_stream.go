package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// A streamed Messages API answer is a sequence of server-sent events, each
// an "event: <type>" line and a "data: <json>" line whose JSON names the
// type again: message_start (the message and its usage so far), then for
// each content block content_block_start, content_block_delta (text_delta,
// thinking_delta, signature_delta, input_json_delta) and
// content_block_stop (the API's own web search adds server_tool_use and
// web_search_tool_result blocks, and citations_delta to text: see
// websearch.go), then message_delta (the stop reason and the output
// tokens) and message_stop; ping at any time, and error when the server
// fails after answering 200. Only the data lines are read, each on its own:
// the real server pads them with spaces after the JSON.

// errStreamError marks a stream that carried an error event.
var errStreamError = errors.New("the server reported an error")

// messagesEvent is the union of the events' fields ralph reads.
type messagesEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage messagesUsage `json:"usage"`
	} `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *messagesUsage  `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// messagesUsage is Anthropic's usage: input_tokens leaves out the tokens
// read from and written to the prompt cache.
type messagesUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	// OutputTokensDetails, where the server sends it, says how many of
	// the output tokens were thinking.
	OutputTokensDetails *struct {
		ThinkingTokens int `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	// ServerToolUse counts what the API's own tools did (web_search).
	ServerToolUse *struct {
		WebSearchRequests int `json:"web_search_requests"`
	} `json:"server_tool_use"`
}

// merge takes the counts a later event states (message_delta's, which
// newer servers send in full, or only output_tokens).
func (u *messagesUsage) merge(o messagesUsage) {
	for _, p := range []struct {
		dst *int
		v   int
	}{
		{&u.InputTokens, o.InputTokens}, {&u.CacheCreationInputTokens, o.CacheCreationInputTokens},
		{&u.CacheReadInputTokens, o.CacheReadInputTokens}, {&u.OutputTokens, o.OutputTokens},
	} {
		if p.v > 0 {
			*p.dst = p.v
		}
	}
	if o.OutputTokensDetails != nil {
		u.OutputTokensDetails = o.OutputTokensDetails
	}
	if o.ServerToolUse != nil {
		u.ServerToolUse = o.ServerToolUse
	}
}

// usage is the counts in ralph's terms: InputTokens the whole prompt.
func (u messagesUsage) usage() conversation.Usage {
	out := conversation.Usage{
		InputTokens:      u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = d.ThinkingTokens
	}
	if s := u.ServerToolUse; s != nil {
		out.WebSearches = s.WebSearchRequests
	}
	return out
}

// streamBlock is one content block as it streams in.
type streamBlock struct {
	typ       string
	id, name  string
	text      strings.Builder // text, thinking, or a tool call's arguments
	signature string
	start     json.RawMessage // the block as content_block_start gave it
}

// messagesTurn assembles one answer.
type messagesTurn struct {
	emit     func(Delta)
	blocks   []*streamBlock
	usage    messagesUsage
	sawUsage bool
	stop     string
	done     bool // message_stop arrived
	err      json.RawMessage
}

// read consumes the stream until message_stop, an error event, or its
// end. Its error is the reader's, or errStreamError.
func (t *messagesTurn) read(r io.Reader) error {
	return readEvents(r, t.handle, func() bool { return t.done })
}

func (t *messagesTurn) handle(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	var ev messagesEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("%w: an event that is not JSON: %w", ErrBrokenStream, err)
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			t.usage, t.sawUsage = ev.Message.Usage, true
		}
	case "content_block_start":
		t.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		t.delta(ev)
	case "content_block_stop":
		// Blocks are finished from their deltas when the turn is.
	case "message_delta":
		if ev.Delta.StopReason != "" {
			t.stop = ev.Delta.StopReason
		}
		if ev.Usage != nil {
			t.usage.merge(*ev.Usage)
			t.sawUsage = true
		}
	case "message_stop":
		t.done = true
	case "error":
		t.err = ev.Error
		return errStreamError
	}
	// ping, and event types added later, are no part of the answer.
	return nil
}

func (t *messagesTurn) block(index int) *streamBlock {
	if index < 0 || index >= len(t.blocks) {
		return nil
	}
	return t.blocks[index]
}

func (t *messagesTurn) start(index int, raw json.RawMessage) {
	var cb struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Text      string `json:"text"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		// A web_search_tool_result's: the server_tool_use it answers,
		// and its results (or an error object), whole at its start.
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &cb)
	if index < 0 || index > 1<<16 {
		return
	}
	for len(t.blocks) <= index {
		t.blocks = append(t.blocks, nil)
	}
	b := &streamBlock{typ: cb.Type, id: cb.ID, name: cb.Name, signature: cb.Signature, start: raw}
	t.blocks[index] = b
	switch cb.Type {
	case "text":
		t.text(b, cb.Text)
	case "thinking":
		t.thinking(b, cb.Thinking)
	case "tool_use":
		t.emit(Delta{ToolName: cb.Name})
	case "web_search_tool_result":
		// The API ran the search the server_tool_use before it asked
		// for: it is shown, never run by ralph.
		n, code := searchResult(cb.Content)
		t.emit(Delta{Search: &SearchInfo{Query: t.serverQuery(cb.ToolUseID), Results: n, Error: code}})
	}
}

// serverQuery is the query of the server_tool_use block of id.
func (t *messagesTurn) serverQuery(id string) string {
	for _, b := range t.blocks {
		if b != nil && b.typ == "server_tool_use" && b.id == id {
			return searchQuery(b.text.String())
		}
	}
	return ""
}

func (t *messagesTurn) text(b *streamBlock, s string) {
	if s != "" {
		b.text.WriteString(s)
		t.emit(Delta{Text: s})
	}
}

func (t *messagesTurn) thinking(b *streamBlock, s string) {
	if s != "" {
		b.text.WriteString(s)
		t.emit(Delta{Reasoning: s})
	}
}

func (t *messagesTurn) delta(ev messagesEvent) {
	b := t.block(ev.Index)
	if b == nil {
		return
	}
	switch ev.Delta.Type {
	case "text_delta":
		t.text(b, ev.Delta.Text)
	case "thinking_delta":
		t.thinking(b, ev.Delta.Thinking)
	case "signature_delta":
		b.signature += ev.Delta.Signature
	case "input_json_delta":
		b.text.WriteString(ev.Delta.PartialJSON)
	}
}

// finish is the assembled answer, with its finish reason in ralph's
// (OpenAI's) words.
func (t *messagesTurn) finish(provider string) (Response, error) {
	var out Response
	out.Message.Role = conversation.RoleAssistant
	var content, reasoning strings.Builder
	for _, b := range t.blocks {
		if b == nil {
			continue
		}
		switch b.typ {
		case "text":
			content.WriteString(b.text.String())
		case "thinking":
			reasoning.WriteString(b.text.String())
			block, err := json.Marshal(struct {
				Type      string `json:"type"`
				Thinking  string `json:"thinking"`
				Signature string `json:"signature"`
			}{"thinking", b.text.String(), b.signature})
			if err != nil {
				return Response{}, fmt.Errorf("keep a thinking block: %w", err)
			}
			out.Message.Opaque = append(out.Message.Opaque, conversation.OpaqueBlock{Provider: provider, Block: block})
		case "redacted_thinking":
			// Encrypted thinking comes whole at its start and goes back so.
			out.Message.Opaque = append(out.Message.Opaque, conversation.OpaqueBlock{Provider: provider, Block: b.start})
		case "tool_use":
			args := b.text.String()
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, conversation.ToolCall{ID: b.id, Name: b.name, Arguments: args})
		case "server_tool_use", "web_search_tool_result":
			// The API's own search, which it ran: not kept, and neither
			// are the citations of the text, which point into it, so the
			// turn goes back as its text (websearch.go). The API takes an
			// assistant turn without them; carried back, their encrypted
			// results would grow every later request and the records.
		}
	}
	out.Message.Content = content.String()
	out.Reasoning = reasoning.String()
	out.FinishReason = finishReason(t.stop)
	if t.sawUsage {
		out.Usage = t.usage.usage()
	}
	return out, nil
}

// finishReason maps a stop_reason onto the finish reasons the rest of
// ralph knows (coordinator/turn.go).
func finishReason(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "pause_turn":
		// The API pauses a long turn of its own server tools, and ralph
		// sends it back to go on (messagesWire.attempt) a few times; one
		// paused still then is a turn cut short, which the coordinator
		// reports as one cut at the output limit, keeping its text,
		// rather than a turn that looks finished.
		return "length"
	case "refusal":
		// The model declined for safety reasons: the content filter's
		// outcome, whose message is set aside (coordinator/turn.go).
		return "content_filter"
	}
	return stop
}
