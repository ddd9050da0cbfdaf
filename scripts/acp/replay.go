package acp

import (
	"encoding/json"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// toolEvent is a recorded tool call as the event that announced it.
func toolEvent(c conversation.ToolCall) event.Event {
	return event.Event{Type: event.ToolCall, ToolID: c.ID, ToolName: c.Name, ToolArgs: json.RawMessage(c.Arguments)}
}

// resultEvent is a recorded tool result as the event that reported it.
func resultEvent(c conversation.ToolCall, r conversation.Message) event.Event {
	return event.Event{Type: event.ToolResult, ToolID: c.ID, ToolName: c.Name, Output: r.Content,
		IsError: strings.HasPrefix(r.Content, "error:") || strings.HasPrefix(r.Content, "Error:")}
}
