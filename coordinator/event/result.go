package event

import (
	"encoding/json"
	"os"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Result subtypes, part of the JSON output contract.
const (
	SubtypeSuccess  = "success"
	SubtypeMaxTurns = "error_max_turns"
	// SubtypeMaxIterations is a task loop (ralph run) that stopped at
	// --max-iterations with tasks still open; error_max_turns is a
	// conversation's --max-turns, a different limit with a different fix.
	SubtypeMaxIterations  = "error_max_iterations"
	SubtypeMaxTokens      = "error_max_tokens"
	SubtypeExecutionError = "error_during_execution"
	SubtypeInterrupted    = "interrupted"
)

// Result is how a run ended.
type Result struct {
	Subtype   string `json:"subtype"`
	IsError   bool   `json:"is_error"`
	Text      string `json:"result"`
	SessionID string `json:"session_id"`
	// NumTurns, Duration, Usage and CostUSD are this run's: a continued
	// session's earlier runs are not in them.
	NumTurns int                `json:"num_turns"`
	Duration time.Duration      `json:"-"`
	Usage    conversation.Usage `json:"usage"`
	CostUSD  *float64           `json:"total_cost_usd"`
	// CacheSavedUSD is what prompt caching saved this run at the model's
	// price (llm.Price.Saved), when it read or wrote any cached tokens and
	// the price is known.
	CacheSavedUSD *float64 `json:"cache_saved_usd,omitempty"`
	// SessionTurns, SessionUsage and SessionCostUSD are the session's
	// totals, earlier runs included (the same as this run's in a new
	// session).
	SessionTurns   int                `json:"session_num_turns"`
	SessionUsage   conversation.Usage `json:"session_usage"`
	SessionCostUSD *float64           `json:"session_total_cost_usd"`
	// Err is the error behind an error_during_execution result.
	Err error `json:"-"`
	// Signal is the signal behind an interrupted result, if any.
	Signal os.Signal `json:"-"`
	// Denied lists the calls refused for want of an approval nobody could
	// give, so faces can say how to allow them.
	Denied []Denial `json:"-"`
	// Written are the paths (as the model gave them) this run's file
	// tools were asked to write, when nothing else can have changed a
	// file: no command ran, no agent was spawned, no hook is set and no
	// step was cut short. nil when anything may have changed; empty when
	// nothing did. A task's checkpoint then looks at these paths alone
	// instead of walking the whole work tree.
	Written []string `json:"-"`
	// Structured is the final answer as the JSON value the output schema
	// asked for (SetOutputSchema), nil without one.
	Structured json.RawMessage `json:"structured_output,omitempty"`
}

// Denial is one call refused for want of approval: a command, or the
// arguments of another tool (an MCP server's).
type Denial struct {
	Tool    string
	Command string          // run_command's
	Args    json.RawMessage // any other tool's
	// By is what wanted the approval, and Hook the hook that did, when
	// one did (workers.Result.DeniedBy, as the coordinator maps it).
	By   Denier
	Hook string
}

// Denier is what wanted the approval a denied call did not get. It is
// the event's own copy of workers.Denier, which the coordinator maps to
// it, so that a face reading a Result needs not import the tools.
type Denier int

const (
	// DeniedCall: the call's own approval (a command, an MCP tool).
	DeniedCall Denier = iota
	// DeniedByGuard: a PreToolUse hook of the project (or a plugin's)
	// that guards the call and was not approved; a guard that does not
	// run guards nothing, so the call is refused until the hook is
	// approved (`ralph hooks approve`).
	DeniedByGuard
	// DeniedByHookAsk: a PreToolUse hook asked a person about the call,
	// and nobody could answer; --yes does not answer for them.
	DeniedByHookAsk
)
