// Package report holds ralph's read-only session commands: status, the
// list of sessions across projects, logs, analysis, comparison and the final
// report. Each returns a struct (for --json) and formats it as text or
// markdown for people. Nothing here calls a model or writes anything except
// the final report itself.
package report

import (
	"encoding/json"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// event is one line of events.jsonl. It mirrors coordinator.Event but is
// decoded here on its own terms, so a log written by an older or newer ralph
// (fields added or missing) still reads; unknown fields are ignored.
type event struct {
	Type      string          `json:"type"`
	Time      time.Time       `json:"time"`
	SessionID string          `json:"session_id"`
	AgentID   string          `json:"agent_id"`
	Turn      int             `json:"turn"`
	Text      string          `json:"text"`
	ToolID    string          `json:"tool_call_id"`
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	Output    string          `json:"output"`
	IsError   bool            `json:"is_error"`
	Retry     *retryInfo      `json:"retry"`
	Model     string          `json:"model"`
	Result    *result         `json:"result"`
}

// retryInfo matches llm.RetryInfo whether it is written with lower-case
// tags or Go's field names: encoding/json matches keys case-insensitively.
type retryInfo struct {
	Attempt int           `json:"attempt"`
	Wait    time.Duration `json:"wait"`
	Reason  string        `json:"reason"`
}

type result struct {
	Subtype   string   `json:"subtype"`
	IsError   bool     `json:"is_error"`
	Text      string   `json:"result"`
	SessionID string   `json:"session_id"`
	NumTurns  int      `json:"num_turns"`
	Usage     usage    `json:"usage"`
	CostUSD   *float64 `json:"total_cost_usd"`
}

type usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Event types this package gives meaning to.
const (
	evSessionStarted = "session_started"
	evTurnStarted    = "turn_started"
	evAssistant      = "assistant"
	evToolCall       = "tool_call"
	evToolResult     = "tool_result"
	evUserMessage    = "user_message"
	evRetry          = "retry"
	evInterrupted    = "interrupted"
	evError          = "error"
	evResult         = "result"
	evTaskChanged    = "task_changed"
)

// readEvents decodes a session's events.jsonl; bad counts lines that did
// not parse (a torn last append, or damage) so callers can say so.
func readEvents(fs afero.Fs, root, id string) (evs []event, bad int, err error) {
	return memory.ReadJSONL[event](fs, memory.LogPath(root, id, memory.EventsLog))
}

// mainAgent says whether an event belongs to the coordinator itself rather
// than a child agent; logs written before agent ids existed have none.
func (e event) mainAgent() bool { return e.AgentID == "" || e.AgentID == "main" }

// toolArgs is the tool call's input as a JSON object. A model may send
// arguments that are not valid JSON, which a writer can only keep as a JSON
// string, so a string holding an object is unwrapped too.
func (e event) toolArgs() json.RawMessage {
	in := e.ToolInput
	var s string
	if len(in) > 0 && in[0] == '"' && json.Unmarshal(in, &s) == nil {
		return json.RawMessage(s)
	}
	return in
}

// toolPath is the "path" argument of a tool call, if it has one.
func (e event) toolPath() string {
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(e.toolArgs(), &args) != nil {
		return ""
	}
	return args.Path
}
