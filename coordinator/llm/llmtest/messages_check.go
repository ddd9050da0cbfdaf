package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// messagesRequest is the part of a Messages API request the stand-in
// checks and caches on.
type messagesRequest struct {
	Model       string            `json:"model"`
	MaxTokens   *int              `json:"max_tokens"`
	Stream      bool              `json:"stream"`
	System      json.RawMessage   `json:"system"`
	Messages    []messagesMessage `json:"messages"`
	Tools       []json.RawMessage `json:"tools"`
	ToolChoice  json.RawMessage   `json:"tool_choice"`
	Temperature *float64          `json:"temperature"`
	Thinking    *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

type messagesMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentBlock is one block of a message's content, as the checks need
// it; raw keeps the whole block for the cache's hash.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
	Data      string          `json:"data"`
	Cache     json.RawMessage `json:"cache_control"`
	raw       json.RawMessage
}

// maxBreakpoints is how many blocks may carry cache_control in one
// request (docs.claude.com, prompt caching).
const maxBreakpoints = 4

// minThinkingBudget is the smallest thinking budget the API accepts.
const minThinkingBudget = 1024

// thinkingDocs is where the real API's thinking errors point.
const thinkingDocs = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

func (m *messagesRequest) thinkingOn() bool {
	return m.Thinking != nil && m.Thinking.Type == "enabled"
}

// blocks is a message's content as blocks; a string is one text block.
func (m messagesMessage) blocks() ([]contentBlock, error) {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		raw, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []contentBlock{{Type: "text", Text: &s, raw: raw}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(m.Content, &raws); err != nil {
		return nil, err
	}
	out := make([]contentBlock, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, err
		}
		out[i].raw = raw
	}
	return out, nil
}

// systemBlocks is the system prompt as blocks; a string is one text block.
func (m *messagesRequest) systemBlocks() ([]contentBlock, error) {
	if len(m.System) == 0 || string(m.System) == "null" {
		return nil, nil
	}
	return messagesMessage{Content: m.System}.blocks()
}

// checkMessages refuses a request the way the real API does (HTTP 400,
// invalid_request_error), returning the message, or "" when the request
// is one the API would serve. The words are the real API's where they
// are known from its answers; the rule that tool results go first is
// documented (docs.claude.com, tool use: "tool_result blocks must come
// FIRST in the content array") in the stand-in's own words.
//
// beta says the request opted into the API's betas (?beta=true or an
// anthropic-beta header), where a "system" message inside messages is
// served: Claude Code 2.1.197 sends one there, and the stand-in must not
// refuse what the real API serves it.
//
// replayed reports whether a signature or a redacted block's data is one a
// replayed recording carried: the real API's, which the stand-in cannot
// check against the text, so it accepts it as given.
func checkMessages(req *messagesRequest, body []byte, beta bool, replayed func(string) bool) string {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(body, &fields)
	if _, ok := fields["max_tokens"]; !ok || req.MaxTokens == nil {
		return "max_tokens: Field required"
	}
	if _, ok := fields["messages"]; !ok {
		return "messages: Field required"
	}
	if req.thinkingOn() {
		switch {
		case req.Thinking.BudgetTokens < minThinkingBudget:
			return fmt.Sprintf("thinking.enabled.budget_tokens: Input should be greater than or equal to %d", minThinkingBudget)
		case *req.MaxTokens <= req.Thinking.BudgetTokens:
			return "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at " + thinkingDocs + "#max-tokens-and-context-window-size"
		case req.Temperature != nil && *req.Temperature != 1:
			return "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at " + thinkingDocs + "#feature-compatibility"
		case req.forcedTool() != "":
			return thinkingForcedTool
		}
	}
	system, err := req.systemBlocks()
	if err != nil {
		return "system: Input should be a valid list"
	}
	breakpoints := 0
	for _, b := range system {
		if hasCache(b.Cache) {
			breakpoints++
		}
	}
	for _, t := range req.Tools {
		var tool struct {
			Cache json.RawMessage `json:"cache_control"`
		}
		if json.Unmarshal(t, &tool) == nil && hasCache(tool.Cache) {
			breakpoints++
		}
	}
	msgs := make([][]contentBlock, len(req.Messages))
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" && !(beta && m.Role == "system") {
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if msgs[i], err = m.blocks(); err != nil {
			return fmt.Sprintf("messages.%d.content: Input should be a valid list", i)
		}
		if len(msgs[i]) == 0 && !(i == len(req.Messages)-1 && m.Role == "assistant") {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		for _, b := range msgs[i] {
			if hasCache(b.Cache) {
				breakpoints++
			}
			if b.Type == "text" && (b.Text == nil || *b.Text == "") {
				return "messages: text content blocks must be non-empty"
			}
		}
	}
	if n := len(msgs); n > 0 && req.Messages[n-1].Role == "assistant" && len(msgs[n-1]) > 0 {
		// A final assistant message is a prefill the answer goes on from.
		if b := msgs[n-1][len(msgs[n-1])-1]; b.Type == "text" && b.Text != nil && strings.TrimRight(*b.Text, " \t\n\r") != *b.Text {
			return "messages: final assistant content cannot end with trailing whitespace"
		}
	}
	if why := req.checkServerTools(); why != "" {
		return why
	}
	if why := checkSearchPairs(req.Messages, msgs); why != "" {
		return why
	}
	if breakpoints > maxBreakpoints {
		return fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", maxBreakpoints, breakpoints)
	}
	turns, turnBlocks := req.Messages, msgs
	if beta {
		// The pairing rules are between the user and assistant turns; a
		// beta's system messages stand aside (the indices in the words
		// below then count without them).
		turns, turnBlocks = nil, nil
		for i, m := range req.Messages {
			if m.Role != "system" {
				turns, turnBlocks = append(turns, m), append(turnBlocks, msgs[i])
			}
		}
	}
	if msg := checkToolPairs(turns, turnBlocks); msg != "" {
		return msg
	}
	return checkThinking(req.thinkingOn(), turns, turnBlocks, replayed)
}

// hasCache reports whether a block's cache_control is set.
func hasCache(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// checkToolPairs enforces the pairing of tool calls and results: every
// tool_use of an assistant message has its tool_result in the very next
// message, a user message whose results come before anything else, and
// no tool_result answers a call that the message before it did not make.
func checkToolPairs(msgs []messagesMessage, blocks [][]contentBlock) string {
	for i, m := range msgs {
		var asked []string
		for _, b := range blocks[i] {
			if b.Type == "tool_use" {
				asked = append(asked, b.ID)
			}
		}
		if m.Role == "user" {
			var prev map[string]bool
			if i > 0 && msgs[i-1].Role == "assistant" {
				prev = map[string]bool{}
				for _, b := range blocks[i-1] {
					if b.Type == "tool_use" {
						prev[b.ID] = true
					}
				}
			}
			other := false
			for j, b := range blocks[i] {
				if b.Type != "tool_result" {
					other = true
					continue
				}
				if !prev[b.ToolUseID] {
					return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
				if other {
					return fmt.Sprintf("messages.%d.content.%d: `tool_result` blocks must come first in the content of a user message, before any other content.", i, j)
				}
			}
		}
		if len(asked) == 0 || i == len(msgs)-1 {
			continue
		}
		answered := map[string]bool{}
		if msgs[i+1].Role == "user" {
			for _, b := range blocks[i+1] {
				if b.Type == "tool_result" {
					answered[b.ToolUseID] = true
				}
			}
		}
		var missing []string
		for _, id := range asked {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", "))
		}
	}
	return ""
}

// checkThinking enforces the rules of thinking blocks sent back: every
// one carries the signature the stand-in gave it (so neither it nor its
// text was changed), and with thinking on, the assistant message whose
// tool calls the conversation is answering starts with its thinking.
func checkThinking(on bool, msgs []messagesMessage, blocks [][]contentBlock, replayed func(string) bool) string {
	for i, bs := range blocks {
		for j, b := range bs {
			switch b.Type {
			case "thinking":
				if b.Thinking == nil || b.Signature == nil || *b.Signature != signThinking(*b.Thinking) && !replayed(*b.Signature) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			case "redacted_thinking":
				if !redactedByUs(b.Data) && !replayed(b.Data) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `data` in `redacted_thinking` block", i, j)
				}
			}
		}
	}
	if !on || len(msgs) < 2 {
		return ""
	}
	last := len(msgs) - 1
	if msgs[last].Role != "user" || msgs[last-1].Role != "assistant" {
		return ""
	}
	results := false
	for _, b := range blocks[last] {
		results = results || b.Type == "tool_result"
	}
	if !results || len(blocks[last-1]) == 0 {
		return ""
	}
	if first := blocks[last-1][0].Type; first != "thinking" && first != "redacted_thinking" {
		return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. "+
			"When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "+
			"We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at %s", last-1, first, thinkingDocs)
	}
	return ""
}

// signThinking is the stand-in's signature of a thinking text: not a
// secret, but it changes with the text, so a client that alters or drops
// it is refused as the real API refuses it.
func signThinking(text string) string {
	sum := sha256.Sum256([]byte("llmtest thinking\x00" + text))
	return "Eq" + base64.StdEncoding.EncodeToString(sum[:])
}

// redactThinking is the opaque data of a redacted_thinking block whose
// hidden text is text.
func redactThinking(text string) string {
	sum := sha256.Sum256([]byte("llmtest redacted\x00" + text))
	return "Er" + base64.StdEncoding.EncodeToString(append(sum[:8:8], text...))
}

// redactedByUs reports whether data is what redactThinking made.
func redactedByUs(data string) bool {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(data, "Er"))
	if err != nil || !strings.HasPrefix(data, "Er") || len(raw) < 8 {
		return false
	}
	sum := sha256.Sum256(append([]byte("llmtest redacted\x00"), raw[8:]...))
	return bytes.Equal(sum[:8], raw[:8])
}

// check parses and checks a Messages request before it is served, and
// looks up what it reads from the prompt cache.
func (messagesAPI) check(x *exchange, body []byte) (int, string) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return 400, "fake model: cannot decode request: " + err.Error()
	}
	beta := x.r.URL.Query().Get("beta") == "true" || x.r.Header.Get("Anthropic-Beta") != ""
	if msg := checkMessages(&req, body, beta, x.s.replayedOpaque); msg != "" {
		return 400, msg
	}
	if sc := x.s.scenario; sc != nil && sc.ContextWindow > 0 && quarter(len(body)) > sc.ContextWindow {
		return 400, fmt.Sprintf("prompt is too long: %d tokens > %d maximum", quarter(len(body)), sc.ContextWindow)
	}
	system, _ := req.systemBlocks()
	msgs := make([][]contentBlock, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i], _ = m.blocks()
	}
	x.msg = &req
	x.cache = x.s.lookupCache(&req, system, msgs, quarter(len(body)))
	return 0, ""
}
