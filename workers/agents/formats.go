package agents

import (
	"encoding/json"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// This file reads the two structured output formats. Sources: for claude,
// Claude Code's headless-mode documentation (docs.anthropic.com/en/docs/
// claude-code/sdk/sdk-headless: stream-json needs --verbose, the last line
// is the result object) and the Agent SDK's message types (assistant
// messages in the Messages API shape; the result's result, is_error,
// total_cost_usd and usage); for codex, codex-rs/exec/src/exec_events.rs
// in github.com/openai/codex (ThreadEvent, ThreadItemDetails, Usage) and
// codex-rs/exec/src/cli.rs (a prompt of "-" is read from stdin).

// claudeEvent is one line of claude -p --output-format stream-json --verbose:
// "system" (init), "assistant" and "user" messages in the Anthropic Messages
// shape, and a last "result" with the answer, cost and cumulative usage.
type claudeEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message *struct {
		Content json.RawMessage `json:"content"` // a string or a list of blocks
	} `json:"message"`
	Result  *string `json:"result"`
	IsError bool    `json:"is_error"`
	// Error marks claude's synthetic assistant message about a failed
	// API call ("rate_limit", "unknown", …).
	Error        string       `json:"error"`
	TotalCostUSD *float64     `json:"total_cost_usd"`
	Usage        *claudeUsage `json:"usage"`
	// PermissionDenials and Errors are read apart (see claudeResultDetails),
	// so that a shape ralph does not expect cannot make the whole line
	// unreadable.
	PermissionDenials json.RawMessage `json:"permission_denials"`
	Errors            json.RawMessage `json:"errors"`
}

type claudeBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// A tool_result block (in a "user" message) answers the tool_use
	// whose id is ToolUseID; Content is a string or a list of blocks.
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeUsage is Anthropic's usage, where input_tokens excludes the prompt
// tokens written to or read from the cache. They are added back so that
// InputTokens means the whole prompt, as it does for OpenAI models.
type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// claudeLine handles a claude event and reports whether b was one.
func (s *agentStream) claudeLine(b []byte) bool {
	var ev claudeEvent
	if json.Unmarshal(b, &ev) != nil || ev.Type == "" {
		return false
	}
	switch ev.Type {
	case "assistant":
		var blocks []claudeBlock
		if ev.Message != nil && json.Unmarshal(ev.Message.Content, &blocks) == nil {
			for _, bl := range blocks {
				switch bl.Type {
				case "text":
					if ev.Error != "" {
						s.noteLimit(bl.Text)
					}
					s.assistantText(bl.Text)
				case "tool_use":
					s.claudeToolUse(bl)
					s.send(Event{Kind: "tool", Text: toolSummary(bl.Name, string(bl.Input))})
				}
			}
		}
	case "user":
		var blocks []claudeBlock
		if ev.Message != nil && json.Unmarshal(ev.Message.Content, &blocks) == nil {
			for _, bl := range blocks {
				if bl.Type == "tool_result" {
					s.claudeToolResult(bl)
				}
			}
		}
	case "result":
		if ev.Result != nil {
			s.final, s.hasFinal = *ev.Result, true
			s.checkText(*ev.Result)
		}
		if ev.TotalCostUSD != nil {
			c := *ev.TotalCostUSD
			s.cost = &c
		}
		if u := ev.Usage; u != nil {
			s.usage = conversation.Usage{
				InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
				OutputTokens: u.OutputTokens,
			}
			usage := s.usage
			s.send(Event{Kind: "usage", Usage: &usage})
		}
		s.claudeResultDetails(ev)
	case "rate_limit_event":
		if l, ok := claudeRateLimit(b); ok {
			s.keepLimit(l)
		}
	}
	return true // system and future events carry nothing ralph uses
}

// codexEvent is one line of codex exec --json: thread.started,
// turn.started, item.started/updated/completed (item.type agent_message,
// reasoning, command_execution, file_change, mcp_tool_call, web_search,
// todo_list, error), turn.completed (usage), turn.failed and error. Older
// codex versions wrote {"id":…,"msg":{"type":"agent_message","message":…}};
// their agent messages are understood too.
type codexEvent struct {
	Type  string     `json:"type"`
	Item  *codexItem `json:"item"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"` // includes cached_input_tokens
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
	Msg     *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"msg"`
}

type codexItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Status   string `json:"status"` // of a command: in_progress, completed, failed, declined
	Output   string `json:"aggregated_output"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server  string          `json:"server"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"arguments"`
	Query   string          `json:"query"`
	Message string          `json:"message"`
}

// codexLine handles a codex event and reports whether b was one.
func (s *agentStream) codexLine(b []byte) bool {
	var ev codexEvent
	if json.Unmarshal(b, &ev) != nil || (ev.Type == "" && ev.Msg == nil) {
		return false
	}
	switch ev.Type {
	case "item.started":
		if ev.Item != nil {
			s.codexTool(ev.Item)
		}
	case "item.completed":
		if ev.Item != nil {
			s.codexItemDone(ev.Item)
		}
	case "turn.completed":
		s.codexErr = "" // whatever went wrong before, the turn recovered
		if u := ev.Usage; u != nil {
			turn := conversation.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
			s.usage = s.usage.Add(turn)
			s.send(Event{Kind: "usage", Usage: &turn})
		}
	case "turn.failed":
		msg := s.codexErr
		if ev.Error != nil && strings.TrimSpace(ev.Error.Message) != "" {
			msg = ev.Error.Message
		}
		if msg == "" {
			msg = "the turn failed"
		}
		s.noteLimit(msg)
		s.agentErr, s.codexErr = msg, ""
		s.send(Event{Kind: "error", Text: capEventText(msg)})
	case "error":
		// codex also reports errors it recovers from (a stream it
		// reconnects) this way: the error is the run's only if no turn
		// completes after it.
		s.noteLimit(ev.Message)
		s.codexErr = ev.Message
		s.send(Event{Kind: "warning", Text: capEventText(ev.Message)})
	case "":
		if ev.Msg.Type == "agent_message" {
			s.final, s.hasFinal = ev.Msg.Message, true
			s.assistantText(ev.Msg.Message)
		}
	}
	return true // thread.started, turn.started, item.updated and future events are not needed
}

// codexItemDone handles a finished item: agent messages are the answer;
// a tool that was not reported when it started is reported now.
func (s *agentStream) codexItemDone(it *codexItem) {
	switch it.Type {
	case "agent_message":
		s.final, s.hasFinal = it.Text, true
		s.assistantText(it.Text)
	case "error":
		// An error item is a notice that did not stop the turn, such as
		// "Model metadata for `x` not found"; fatal errors are events of
		// their own.
		s.noteLimit(it.Message)
		s.send(Event{Kind: "warning", Text: capEventText(it.Message)})
	case "command_execution":
		s.codexCommand(it)
		if !s.started[it.ID] || it.ID == "" {
			s.codexTool(it)
		}
	default:
		if !s.started[it.ID] || it.ID == "" {
			s.codexTool(it)
		}
	}
}

// codexTool reports an item that is a tool call, once.
func (s *agentStream) codexTool(it *codexItem) {
	var text string
	switch it.Type {
	case "command_execution":
		text = toolSummary("shell", it.Command)
	case "file_change":
		paths := make([]string, 0, len(it.Changes))
		for _, c := range it.Changes {
			paths = append(paths, c.Kind+" "+c.Path)
		}
		text = toolSummary("edit", strings.Join(paths, ", "))
	case "mcp_tool_call":
		text = toolSummary(it.Server+"."+it.Tool, string(it.Args))
	case "web_search":
		text = toolSummary("web_search", it.Query)
	default:
		return // agent messages, reasoning and to-do lists are not tools
	}
	if it.ID != "" {
		s.started[it.ID] = true
	}
	s.send(Event{Kind: "tool", Text: text})
}
