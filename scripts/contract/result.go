package contract

import (
	"encoding/json"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// ResultLine is the final object of json and stream-json output: the
// result of a one-shot, a script's step, ralph run or a watched run. Its
// field names and order are a contract (see docs/oneshot.md and
// docs/events.md).
type ResultLine struct {
	// Type is "result".
	Type string `json:"type"`
	// SchemaVersion is the contract's version (docs/events.md).
	SchemaVersion Version `json:"schema_version"`
	// Subtype is how the run ended: success, error_max_turns (a
	// conversation reached --max-turns), error_max_iterations (ralph run
	// reached --max-iterations with tasks open), error_max_tokens,
	// error_during_execution or interrupted.
	Subtype string `json:"subtype"`
	// IsError says the run failed; the exit code is not 0 then.
	IsError bool `json:"is_error"`
	// Result is the answer, or what went wrong.
	Result string `json:"result"`
	// SessionID is the session the run recorded into.
	SessionID string `json:"session_id"`
	// NumTurns is how many turns this run took.
	NumTurns int `json:"num_turns"`
	// DurationMS is how long this run took.
	DurationMS int64 `json:"duration_ms"`
	// Usage is the tokens this run used.
	Usage conversation.Usage `json:"usage"`
	// TotalCostUSD is what this run cost, null when the model's price is
	// unknown.
	TotalCostUSD *float64 `json:"total_cost_usd"`
	// CacheSavedUSD is what prompt caching saved this run (cached tokens
	// at the input price less what they cost), when the run read or wrote
	// any and the model's price is known; usage's cache_read_tokens and
	// cache_write_tokens count them.
	CacheSavedUSD *float64 `json:"cache_saved_usd,omitempty"`
	// SessionNumTurns, SessionUsage and SessionTotalCostUSD are the
	// session's totals: after -c or --resume, earlier runs are in them
	// and not in the fields above, which count this run alone.
	SessionNumTurns     int                `json:"session_num_turns"`
	SessionUsage        conversation.Usage `json:"session_usage"`
	SessionTotalCostUSD *float64           `json:"session_total_cost_usd"`
	// PermissionDenials are the calls refused for want of an approval
	// nobody could give.
	PermissionDenials []Denial `json:"permission_denials,omitempty"`
	// Error is the error behind an error_during_execution result.
	Error string `json:"error,omitempty"`
	// Tasks and Reason are set by `ralph run`: the tasks by state as
	// the run ended, and why it ended.
	Tasks  *memory.TaskCounts `json:"tasks,omitempty"`
	Reason string             `json:"reason,omitempty"`
	// FilesChanged, TasksDone and ContinueCommand are the one-shot's
	// summary of its session, as a terminal shows it when the run ends
	// (its turns and cost are session_num_turns and
	// session_total_cost_usd above).
	FilesChanged    *int   `json:"files_changed,omitempty"`
	TasksDone       *int   `json:"tasks_done,omitempty"`
	ContinueCommand string `json:"continue_command,omitempty"`
	// Todo is the main agent's todo list as the one-shot's session keeps
	// it when the run ends (update_plan; TodoWrite under Claude Code's
	// name), so a script reads the steps the model meant to take and how
	// far it got without following the event stream.
	Todo *memory.TodoList `json:"todo,omitempty"`
	// StructuredOutput is the final answer as the JSON value the output
	// schema asked for (--output-schema, --json-schema), when the run
	// succeeded with one; result holds the same JSON as text.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
}

// Denial is a tool call refused for want of approval: a command, or an
// MCP tool's call with its arguments.
type Denial struct {
	// ToolName is the refused tool.
	ToolName string `json:"tool_name"`
	// Command is run_command's command.
	Command string `json:"command,omitempty"`
	// Arguments are any other tool's arguments.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}
