// Package event is the agent's and the task loop's account of what
// happened: the Event the coordinator publishes and the task loop emits,
// its kinds, the small payloads it carries and the Result a run ends
// with. It is the JSON contract of stream-json, ralph watch --json and
// events.jsonl (docs/events.md is generated from these types by
// cmd/eventsdoc). It stands below the coordinator and the loop machine
// and imports neither the model client nor the tools, so the pure
// machine can emit events without pulling either in
// (e2e/layers_test.go).
package event

import (
	"encoding/json"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/git"
)

// SchemaVersion is the version of the JSON event contract: every line
// ralph prints as JSON (stream-json, ralph watch --json, the result
// object) carries it as schema_version. docs/events.md, generated from the
// types, is the contract and says when the version changes: a field or a
// kind added keeps it; a field removed or renamed, or a meaning changed,
// raises it by one.
const SchemaVersion = 1

// Type names an event's kind; the names are part of the stream-json
// contract.
type Type string

// Marks are what a line of events.jsonl holds when it is an event of one
// of types (its quoted type), for memory.EachJSONL to decode those lines
// alone.
func Marks(types ...Type) []string {
	marks := make([]string, len(types))
	for i, t := range types {
		marks[i] = `"` + string(t) + `"`
	}
	return marks
}

// The kinds of event the coordinator and the task loop emit. Most explain themselves; a few
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
	SessionStarted Type = "session_started"
	TurnStarted    Type = "turn_started"
	TextDelta      Type = "text_delta"
	ThinkingDelta  Type = "thinking_delta"
	Thinking       Type = "thinking"
	Assistant      Type = "assistant"
	AssistantCut   Type = "assistant_cut"
	ToolCall       Type = "tool_call"
	ToolResult     Type = "tool_result"
	UserMessage    Type = "user_message"
	MessageRefused Type = "message_refused"
	Retry          Type = "retry"
	Fallback       Type = "fallback"
	Waiting        Type = "waiting"
	AgentSpawned   Type = "agent_spawned"
	AgentFinished  Type = "agent_finished"
	TaskChanged    Type = "task_changed"
	FilesChanged   Type = "files_changed"
	StateSaved     Type = "state_saved"
	Interrupted    Type = "interrupted"
	Error          Type = "error"
	Warning        Type = "warning"
	RunResult      Type = "result"
	Question       Type = "question"
	Answered       Type = "answered"
	LimitWait      Type = "limit_wait"
	Breaker        Type = "breaker"
	Decision       Type = "decision"
	Verified       Type = "verified"
	TodoUpdated    Type = "todo_updated"
	WebSearch      Type = "web_search"
)

// ConversationCompacted is conversation_compacted: see the list
// above.
const ConversationCompacted Type = "conversation_compacted"

// MainAgent is the agent id of the coordinator itself.
const MainAgent = "main"

// Event is one thing that happened. Fields not relevant to a type are empty.
type Event struct {
	// Type says what happened, and so which fields are set.
	Type      Type      `json:"type"`
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
	IsError bool       `json:"is_error,omitempty"`
	Retry   *RetryInfo `json:"retry,omitempty"`
	// Fallback is a fallback event's switch: the model that failed, the
	// one the turn goes to, why, and, the first time another provider's
	// model answers, what does not carry over.
	Fallback *FallbackInfo `json:"fallback,omitempty"`
	SilentMS int64         `json:"silent_ms,omitempty"` // how long the endpoint has sent nothing, of a waiting event
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
	Search *SearchInfo `json:"search,omitempty"`
	// Asking, on a tool_call, says a person is asked before the call
	// runs: a face shows the question, and the call once it is allowed,
	// not a "running" line for a command nobody approved yet.
	Asking bool `json:"asking,omitempty"`
}
