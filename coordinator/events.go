// Package coordinator is the agent: the conversation with the model, its
// turns (turn.go, with the request trimmed to the context window in
// fitcontext.go and compacted in compact.go) and tool steps (toolstep.go),
// its child agents (children.go), the event loop over the interrupt queue,
// the typed events it publishes (events.go) and the session's recorder
// (recorder.go), checkpoints around turns and the conversation's hook
// events (hooks.go). Faces (one-shot output, the chat shell) consume its
// typed events and never reach into its internals.
package coordinator

import (
	"encoding/json"
	"os"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers"
)

// SchemaVersion is the version of the JSON event contract: every line
// ralph prints as JSON (stream-json, ralph watch --json, the result
// object) carries it as schema_version. docs/events.md, generated from the
// types, is the contract and says when the version changes: a field or a
// kind added keeps it; a field removed or renamed, or a meaning changed,
// raises it by one.
const SchemaVersion = 1

// EventType names an event; the names are part of the stream-json contract.
type EventType string

// EventMarks are what a line of events.jsonl holds when it is an event of
// one of types (its quoted type), for memory.EachJSONL to decode those
// lines alone.
func EventMarks(types ...EventType) []string {
	marks := make([]string, len(types))
	for i, t := range types {
		marks[i] = `"` + string(t) + `"`
	}
	return marks
}

// The event types the coordinator emits. Most explain themselves; a few
// need a word:
//
//   - session_started begins a run (each message of a chat is one); its
//     Text is the run's prompt, "" when the run continues the
//     conversation as it stands.
//   - user_message is a prompt an agent was given: a run's prompt, right
//     after its session_started (records before issue 57 have the prompt
//     in session_started only), a message delivered while the run works
//     (Priority normal or urgent), or, with a child's AgentID, its task.
//   - text_delta is published lossily: a face that falls behind may miss
//     some, and the turn's full text follows as assistant.
//   - waiting says the model endpoint has sent nothing for SilentMS, about
//     once a second from ten seconds of silence on; one without SilentMS
//     says data flows again. WaitLimitMS and ModelLoaded say why a local
//     model is waited for longer. It carries no words (records before
//     issue 50 had them in Text): coordinator/eventwords words it.
//   - files_changed follows a turn that changed files in a git work tree:
//     which, with their added and deleted lines, since the checkpoint
//     before the turn; in the task loop, a task attempt (Task names it)
//     or the merge of a task's worktree. Outside git (no checkpoints) it
//     names the files the turn's write_file and edit_file changed
//     (Options.FilesFromTools).
//   - thinking_delta is a piece of a thinking model's reasoning, published
//     lossily like text_delta; thinking, once the turn is over, has all of
//     it. Neither is ever sent back to the model.
//   - warning is something that went wrong without ending the run (the
//     server cut the prompt), said once.
//   - question says the run waits for a person's answer (Question), at
//     its terminal or from another one (ralph answer); answered says it
//     came: Text is the answer, Output where it came from.
//   - message_refused says the endpoint refused the request that ended
//     with the person's message (HTTP 400, 413 or 422, a content filter,
//     a context-length error): Text is the endpoint's reason, Output the
//     message. The message is kept in the conversation, marked
//     (conversation.Message.Refused), and left out of every later request
//     until /retry sends it again.
//   - conversation_compacted says the conversation was summarised in
//     place and goes on, in the same session, from the summary (Output)
//     and the messages kept after it: the person's /compact, or ralph's
//     own after the endpoint refused the conversation as longer than
//     its window, before it tries once more. Compaction has the counts;
//     Text says it in a line.
//   - assistant_cut is the partial text of a turn cut short by the user, as
//     kept in the conversation. It is recorded, not streamed: stream-json
//     readers had that text as text deltas already.
//   - limit_wait says the task loop starts no task until Until, waiting
//     for a rate or usage limit to reset (Text: "waiting for the rate
//     limit until 14:05"); one without Until says the wait is over.
//   - breaker is a change of the circuit breaker's State (open,
//     half_open, closed); an open one waits until Until.
//   - verified says the task loop ran an attempt's verify commands
//     (--verify, the plan's validation commands, a task's own
//     "Verify: `CMD` passes"), passed or not: Text is the commands, or
//     the one that did not pass; TaskAttempt.Verify how the run went;
//     IsError that it failed. A passing verify is a line in every face,
//     as a failing one is.
//   - todo_updated is the todo list an agent set (update_plan, TodoWrite
//     under Claude Code's name): Todo is the whole list as it is now, its
//     steps and their statuses. It is the agent's working list for the
//     session, not RALPH_TASKS.md. A resumed session publishes the main
//     agent's list again, once, before its first run.
//   - web_search is a search the provider's own web_search tool ran
//     inside a turn (Search: the query, how many results or the
//     provider's error code). The provider ran it, not ralph: it is no
//     tool call, no hook fires for it and nothing is approved.
//   - decision is a choice that shaped the run, and why (Decision): a
//     task picked, a retry, a breaker transition, a context trim, a
//     person's answer, an agent's record_decision. The recorder writes it
//     to decisions.jsonl as well as to the event log.
const (
	EventSessionStarted EventType = "session_started"
	EventTurnStarted    EventType = "turn_started"
	EventTextDelta      EventType = "text_delta"
	EventThinkingDelta  EventType = "thinking_delta"
	EventThinking       EventType = "thinking"
	EventAssistant      EventType = "assistant"
	EventAssistantCut   EventType = "assistant_cut"
	EventToolCall       EventType = "tool_call"
	EventToolResult     EventType = "tool_result"
	EventUserMessage    EventType = "user_message"
	EventMessageRefused EventType = "message_refused"
	EventRetry          EventType = "retry"
	EventFallback       EventType = "fallback"
	EventWaiting        EventType = "waiting"
	EventAgentSpawned   EventType = "agent_spawned"
	EventAgentFinished  EventType = "agent_finished"
	EventTaskChanged    EventType = "task_changed"
	EventFilesChanged   EventType = "files_changed"
	EventStateSaved     EventType = "state_saved"
	EventInterrupted    EventType = "interrupted"
	EventError          EventType = "error"
	EventWarning        EventType = "warning"
	EventResult         EventType = "result"
	EventQuestion       EventType = "question"
	EventAnswered       EventType = "answered"
	EventLimitWait      EventType = "limit_wait"
	EventBreaker        EventType = "breaker"
	EventDecision       EventType = "decision"
	EventVerified       EventType = "verified"
	EventTodoUpdated    EventType = "todo_updated"
	EventWebSearch      EventType = "web_search"
)

// EventConversationCompacted is conversation_compacted: see the list
// above.
const EventConversationCompacted EventType = "conversation_compacted"

// MainAgent is the agent id of the coordinator itself.
const MainAgent = "main"

// Event is one thing that happened. Fields not relevant to a type are empty.
type Event struct {
	// Type says what happened, and so which fields are set.
	Type      EventType `json:"type"`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id,omitempty"`
	// AgentID is the agent the event is about: "main" for the
	// coordinator, "agent-1.2" for a child agent.
	AgentID string `json:"agent_id,omitempty"`
	// Turn is the agent's turn the event belongs to, from 1.
	Turn int `json:"turn,omitempty"`
	// Text is the event's words: the model's text, a message, a task,
	// an error, as its type says.
	Text string `json:"text,omitempty"`
	// ToolID names a tool call; its tool_result, and the child agent a
	// spawn_agent call starts, carry the same id.
	ToolID string `json:"tool_call_id,omitempty"`
	// ToolName is the called tool's name (mcp__server__tool for an MCP
	// server's).
	ToolName string `json:"tool_name,omitempty"`
	// ToolArgs are the arguments the model gave the tool, as it gave
	// them.
	ToolArgs json.RawMessage `json:"tool_input,omitempty"`
	// Output is what a tool returned to the model, or a second text the
	// type explains.
	Output string `json:"output,omitempty"`
	// IsError says the event reports a failure.
	IsError bool           `json:"is_error,omitempty"`
	Retry   *llm.RetryInfo `json:"retry,omitempty"`
	// Fallback is a fallback event's switch: the model that failed, the
	// one the turn goes to, why, and, the first time another provider's
	// model answers, what does not carry over.
	Fallback *llm.FallbackInfo `json:"fallback,omitempty"`
	SilentMS int64             `json:"silent_ms,omitempty"` // how long the endpoint has sent nothing, of a waiting event
	// WaitLimitMS is how long a waiting event's silence may last, when a
	// local model that has not begun its answer is waited for longer
	// than the idle timeout; ModelLoaded says Ollama has the model loaded
	// and is reading the prompt.
	WaitLimitMS int64   `json:"wait_limit_ms,omitempty"`
	ModelLoaded bool    `json:"model_loaded,omitempty"`
	Priority    string  `json:"priority,omitempty"` // of a user_message: urgent or normal
	Model       string  `json:"model,omitempty"`
	Result      *Result `json:"result,omitempty"`
	// Files are the files a turn changed, with line counts, in a
	// files_changed event (its Text sums them up in one line).
	Files []git.FileChange `json:"files,omitempty"`
	// Task is the task a files_changed, task_changed or verified event of
	// the task loop is about, or the one an agent_spawned agent works on.
	Task string `json:"task,omitempty"`
	// Question is what a question or answered event is about.
	Question *memory.Question `json:"question,omitempty"`
	// Until is when a limit_wait or an open breaker ends.
	Until time.Time `json:"until,omitzero"`
	// State is the circuit breaker's new state, in a breaker event.
	State string `json:"state,omitempty"`
	// Decision is what a decision event records, as decisions.jsonl
	// holds it.
	Decision *memory.DecisionRecord `json:"decision,omitempty"`
	// TaskAttempt is the attempt at Task that a task_changed event begins
	// or ends, whose verify commands a verified event ran, or that an
	// agent_spawned agent makes.
	TaskAttempt *TaskAttempt `json:"task_attempt,omitempty"`
	// Usage and CostUSD are what an agent spent, on its agent_finished, or
	// a task attempt, on the task_changed that ends it. Reports build their
	// cost per task and per agent from them.
	Usage   *conversation.Usage `json:"usage,omitempty"`
	CostUSD *float64            `json:"cost_usd,omitempty"`
	// Compaction is what a conversation_compacted event did: how many
	// messages it kept, the conversation's estimated size before and
	// after, and why.
	Compaction *conversation.Compaction `json:"compaction,omitempty"`
	// Todo is the whole todo list of a todo_updated event.
	Todo *memory.TodoList `json:"todo,omitempty"`
	// Search is the provider's search of a web_search event.
	Search *llm.SearchInfo `json:"search,omitempty"`
	// Asking, on a tool_call, says a person is asked before the call
	// runs: a face shows the question, and the call once it is allowed,
	// not a "running" line for a command nobody approved yet.
	Asking bool `json:"asking,omitempty"`
}

// TaskAttempt is the task loop's account of one attempt at a task. The
// event that begins an attempt carries its number only; the one that ends
// it also how its verification went and, if it failed, why.
type TaskAttempt struct {
	// Number is the attempt's number, from 1.
	Number int `json:"number"`
	// Verify is how the --verify command went, on the event that ends
	// the attempt.
	Verify *VerifyRun `json:"verify,omitempty"`
	// Error is why the attempt failed.
	Error string `json:"error,omitempty"`
}

// VerifyRun is one run of the task loop's --verify command. Output keeps
// the end of what it printed, where test runners put their verdict.
type VerifyRun struct {
	// OK says the command succeeded.
	OK bool `json:"ok"`
	// DurationMS is how long it ran.
	DurationMS int64 `json:"duration_ms"`
	// Output is the end of what it printed.
	Output string `json:"output,omitempty"`
}

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
	// one did (workers.Result.DeniedBy).
	By   workers.Denier
	Hook string
}
