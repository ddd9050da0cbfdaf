package engine

import (
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// Names of the workflow, its activities, signal and queries: part of the
// contract between workers, clients and workflows already running.
const (
	WorkflowName  = "ralph.TaskLoop"
	AttemptName   = "ralph.TaskAttempt"
	IntegrateName = "ralph.Integrate"
	SignalName    = "ralph.control"
	QueryStatus   = "status"
	QueryEvents   = "events"
	QueryMessages = "messages"
)

// Control is the signal ralph stop, say, pause and continue send.
type Control struct {
	// Op is remote.OpStop, OpSay, OpPause or OpContinue: the vocabulary
	// of ralph's control socket, defined once in coordinator/remote.
	Op     string `json:"op"`
	Text   string `json:"text,omitempty"`
	Urgent bool   `json:"urgent,omitempty"`
}

// RunInput starts a run: the project, and its run configuration as ralph
// settled it (remote.Start), which the workflow and every attempt read
// as data.
type RunInput struct {
	Project Project          `json:"project"`
	Run     memory.RunConfig `json:"run"`
	// Session are the session's settings the run carries, which each
	// worker takes only where they tighten its own configuration.
	Session remote.Session `json:"session,omitempty"`
	// Prompt is the text of the run's prompt template; "" is ralph's own
	// prompt.
	Prompt string `json:"prompt,omitempty"`
	// Backoff is the wait before a task's first retry; it doubles after
	// (0: the default).
	Backoff time.Duration `json:"backoff,omitempty"`
	// HeartbeatTimeout is how long a silent attempt is given before its
	// worker counts as lost and the attempt moves to another (default
	// 30 s).
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	// MaxWait is the longest wait for a rate or usage limit to reset
	// (0: never wait).
	MaxWait time.Duration `json:"max_wait,omitempty"`
	// Ask: someone can answer the loop's questions (the answer signal,
	// see ask.go), for AskTimeout at most (0: DefaultAskTimeout); without
	// it the breaker opens for its cooldown as an unattended local run's.
	Ask        bool          `json:"ask,omitempty"`
	AskTimeout time.Duration `json:"ask_timeout,omitempty"`
	// ContinueAfterEvents: once this many events are in a run's
	// history it continues as new, at the next boundary with nothing in
	// flight (0: DefaultContinueAfterEvents). Tests set it low, through
	// ralph-temporal's RALPH_TEMPORAL_CONTINUE_AFTER_EVENTS.
	ContinueAfterEvents int `json:"continue_after_events,omitempty"`
	// Continued is what a run continued as new carries from the run
	// before it (nil: the first run).
	Continued *Continued `json:"continued,omitempty"`
}

// Continued is the state one run of the task loop hands the next when
// it continues as new: the machine's (its counters and every task's
// attempts, backoffs, breaker), the session's id, which stays the first
// run's, where the events' numbering goes on, and what people sent that
// nothing took yet. The task file is not carried: the next run reads it
// from the branch, as a first run does.
type Continued struct {
	SessionID string           `json:"session_id"`
	Machine   machine.Snapshot `json:"machine"`
	// EventBase is the index of the next run's first event.
	EventBase int `json:"event_base"`
	// Messages are ralph say's messages no attempt received yet.
	Messages []Control `json:"messages,omitempty"`
	// Answers came with no question waiting for them.
	Answers []Answer `json:"answers,omitempty"`
	// WorkedBy is the worker of each task's last finished attempt.
	WorkedBy map[string]string `json:"worked_by,omitempty"`
	// Runs counts the runs before the next one.
	Runs int `json:"runs"`
}

// Policy is the run configuration's part that ralph's decisions take, the
// same for the local loop and this workflow.
func (in RunInput) Policy() decide.Policy {
	return decide.NewPolicy(in.Run, in.Backoff).WithDefaults()
}

// AttemptInput is one attempt at a task.
type AttemptInput struct {
	Project Project       `json:"project"`
	Task    planfile.Task `json:"task"`
	Attempt int           `json:"attempt"`
	// Run, Session and Prompt are the run's, as RunInput holds them.
	Run       memory.RunConfig `json:"run"`
	Session   remote.Session   `json:"session,omitempty"`
	Prompt    string           `json:"prompt,omitempty"`
	SessionID string           `json:"session_id"`
	// MessagesFrom is the first of the run's ralph say messages this
	// attempt's agent gets.
	MessagesFrom int `json:"messages_from"`
	// LastError and LastSummary say how the task's previous attempt
	// failed, which a retry's agent is told, as the local loop's is.
	LastError   string `json:"last_error,omitempty"`
	LastSummary string `json:"last_summary,omitempty"`
	// LastVerify is the end of what the previous attempt's failed
	// verify printed.
	LastVerify string `json:"last_verify,omitempty"`
}

// Error kinds of an attempt's outcome the workflow branches on.
const (
	ErrKindConfig = "config" // the model is configured wrongly: the loop stops
	ErrKindLimit  = "limit"  // a rate or usage limit: wait for its reset
)

// AttemptOutcome is what an attempt came to. Task failures are outcomes,
// not activity errors: ralph's own policy settles them, and Temporal
// retries an activity only when its worker is lost.
type AttemptOutcome struct {
	Completed bool   `json:"completed"`
	Summary   string `json:"summary,omitempty"`
	// Failure is the attempt's error ("" when none): the agent's, or
	// the worker's (its workspace, its push). Attempts before the
	// settlement (machine.Settle) also put the words of a failed
	// verification here, which the workflow takes as they are.
	Failure    string    `json:"failure,omitempty"`
	ErrKind    string    `json:"err_kind,omitempty"`
	LimitUntil time.Time `json:"limit_until,omitempty"`
	// Limit is the limit Failure is, with its kind (nil on outcomes
	// from before it, which name a rate limit by ErrKind).
	Limit *machine.LimitSeen `json:"limit,omitempty"`
	// Verify is the run of the verify commands (nil: none ran),
	// VerifyFailed the command that did not pass and VerifyOutput the
	// head of what they printed, which the workflow words.
	Verify       *event.VerifyRun   `json:"verify,omitempty"`
	VerifyFailed string             `json:"verify_failed,omitempty"`
	VerifyOutput string             `json:"verify_output,omitempty"`
	Usage        conversation.Usage `json:"usage"`
	Turns        int                `json:"turns,omitempty"`
	CostUSD      *float64           `json:"cost_usd,omitempty"`
	// Commit is the head of ralph/<task-id> the attempt pushed ("" when
	// it changed nothing).
	Commit string `json:"commit,omitempty"`
	Worker string `json:"worker,omitempty"`
}

// TaskUpdate is one task's change the integration writes.
type TaskUpdate struct {
	ID       string             `json:"id"`
	State    planfile.TaskState `json:"state"`
	Attempts int                `json:"attempts"`
	// Merge: the task is done; merge ralph/<id> into the target branch.
	Merge bool `json:"merge,omitempty"`
	// Progress is the entry for RALPH_PROGRESS.md, when done.
	Progress *memory.ProgressEntry `json:"progress,omitempty"`
}

// IntegrateInput is one integration: updates to write (none: just read
// the task file, giving ids to tasks without one).
type IntegrateInput struct {
	Project Project      `json:"project"`
	Updates []TaskUpdate `json:"updates,omitempty"`
	// SessionID names the run in commit messages.
	SessionID string `json:"session_id"`
	// Base is the taskHash of the task file the workflow holds: when the
	// branch's is that file, the result is a Diff from it, not the whole
	// file ("": the whole file, as workflows before the diff ask).
	Base string `json:"base,omitempty"`
}

// IntegrateResult is the target branch's task file after the integration
// (whole in Tasks, or as a Diff from the input's Base), and the merges
// that conflicted (task id → the sentence why).
type IntegrateResult struct {
	Tasks     string            `json:"tasks"`
	Diff      *TaskDiff         `json:"diff,omitempty"`
	Conflicts map[string]string `json:"conflicts,omitempty"`
	Head      string            `json:"head"`
}

// Status and RunResult are the query's and the workflow's answers, in
// the types the lean ralph reads.
type (
	Status    = remote.Status
	RunResult = remote.Result
)
