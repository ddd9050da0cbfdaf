// Package viewtest holds the events that every face's tests feed their
// printer, so that each face is checked to print exactly the line
// eventwords.EventLine makes of them, as httptest serves the tests of HTTP code.
package viewtest

import (
	"encoding/json"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// Events are a run with a child agent, a retry and errors: the kinds
// every face (chat, one-shot progress and -v, ralph watch, ralph logs)
// prints a line for, in the order a run sends them.
func Events() []event.Event {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	return []event.Event{
		{Type: event.Retry, Time: at, Turn: 1, Retry: &event.RetryInfo{Attempt: 1, Wait: 1500 * time.Millisecond, Reason: "HTTP 503: busy"}},
		{Type: event.ToolCall, Time: at, Turn: 1, ToolID: "c1", ToolName: "spawn_agent", ToolArgs: json.RawMessage(`{"task":"write the parser"}`)},
		{Type: event.AgentSpawned, Time: at, Turn: 1, AgentID: "agent-1.1", ToolID: "c1", Text: "write the parser"},
		{Type: event.ToolCall, Time: at, Turn: 1, AgentID: "agent-1.1", ToolID: "c2", ToolName: "read_file", ToolArgs: json.RawMessage(`{"path":"gone.go"}`)},
		{Type: event.ToolResult, Time: at, Turn: 1, AgentID: "agent-1.1", ToolID: "c2", ToolName: "read_file", IsError: true, Output: "gone.go: no such file"},
		{Type: event.AgentFinished, Time: at, Turn: 1, AgentID: "agent-1.1", ToolID: "c1", IsError: true, Text: "the model gave up"},
		{Type: event.Warning, Time: at, Turn: 2, Text: "the server cut the prompt"},
		{Type: event.TaskChanged, Time: at, Turn: 2, Text: "t1 failed", Output: "Parse the input"},
	}
}
