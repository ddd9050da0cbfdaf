// Package remote is what the lean ralph and ralph-temporal say to each
// other when a task loop runs on Temporal: ralph execs ralph-temporal and
// reads one JSON Line per line from it. It holds types, and the rule a
// worker takes a run's settings by (Session.Tighten), never the Temporal
// SDK, so ralph links none (which costs about 16 ms of start-up and 10 MB).
package remote

import (
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// Line is one line of ralph-temporal's output while it follows a run: an
// event of the run, or, last, its result.
type Line struct {
	Event  *event.Event `json:"event,omitempty"`
	Result *Result      `json:"result,omitempty"`
}

// Result is how a run ended.
type Result struct {
	Reason     string             `json:"reason"`
	IsError    bool               `json:"is_error"`
	Error      string             `json:"error,omitempty"`
	Done       []string           `json:"done"`
	Failed     []string           `json:"failed"`
	Iterations int                `json:"iterations"`
	Counts     memory.TaskCounts  `json:"tasks"`
	Usage      conversation.Usage `json:"usage"`
	CostUSD    float64            `json:"cost_usd,omitempty"`
	SessionID  string             `json:"session_id"`
}

// Status answers the status query: what ralph status shows of a run on
// Temporal.
type Status struct {
	WorkflowID string `json:"workflow_id"`
	// SessionID is the run's session (its events' session id).
	SessionID  string            `json:"session_id,omitempty"`
	Status     string            `json:"status"` // running, paused, stopping
	Running    []string          `json:"running"`
	Done       []string          `json:"done"`
	Failed     []string          `json:"failed"`
	Counts     memory.TaskCounts `json:"tasks"`
	Iterations int               `json:"iterations"`
	Breaker    *memory.Breaker   `json:"breaker,omitempty"`
	CostUSD    float64           `json:"cost_usd,omitempty"`
	// Tasks are the run's tasks as the target branch's task file holds
	// them, each with the worker that holds it or last worked it: the
	// fleet ralph serve shows.
	Tasks []FleetTask `json:"task_list,omitempty"`
}

// FleetTask is one task of a run on Temporal and where it is worked.
type FleetTask struct {
	ID    string             `json:"id"`
	Title string             `json:"title"`
	State planfile.TaskState `json:"state"`
	// Attempt is the task's attempt in flight, else its last one.
	Attempt int `json:"attempt,omitempty"`
	// Worker names the worker (host:pid) holding the attempt in flight,
	// as Temporal last saw it, else the one that worked the last attempt.
	Worker string `json:"worker,omitempty"`
	// Phase is where the attempt in flight is (fetching, working,
	// pushing), from its last heartbeat.
	Phase string `json:"phase,omitempty"`
}

// Marker is .ralph/engine.json: a project whose task loop runs on
// Temporal, so that ralph stop, say, pause, continue, status and watch
// reach it there. It holds how to connect, never a secret: an API key is
// read from the environment only.
type Marker struct {
	Engine     string `json:"engine"` // "temporal"
	Address    string `json:"address"`
	Namespace  string `json:"namespace,omitempty"`
	TaskQueue  string `json:"task_queue,omitempty"`
	TLS        bool   `json:"tls,omitempty"`
	WorkflowID string `json:"workflow_id,omitempty"`
}

// MarkerFile is the marker's name under .ralph/.
const MarkerFile = "engine.json"

// Start is what ralph hands ralph-temporal to start a run, as one JSON
// document on its standard input: the run configuration as data, so that
// every setting reaches the workers as ralph settled it and none is lost
// on a second trip through flags.
type Start struct {
	Run memory.RunConfig `json:"run"`
	// Session are the session's settings the workers take where they
	// tighten their own configuration (Session.Tighten).
	Session Session `json:"session"`
	// Prompt is the text of the run's prompt template (--prompt-template,
	// else prompt_template in the config), read where the run is started:
	// the workers run on other machines, where its path means nothing.
	// "" is ralph's own prompt.
	Prompt string `json:"prompt,omitempty"`
	// MaxWait is --max-wait or the config's max_wait: the longest wait for
	// a rate or usage limit to reset (0: never wait).
	MaxWait time.Duration `json:"max_wait"`
	// Ask is whether the workflow asks the loop's questions (the breaker,
	// the budget) and waits for their answer, as a local run of the same
	// command would (project.LoopAsks); AskTimeout is how long it waits
	// before the default, no (0: the workflow's default).
	Ask        bool          `json:"ask,omitempty"`
	AskTimeout time.Duration `json:"ask_timeout,omitempty"`
}

// Refused is the sentence why the loop on Temporal cannot run a run
// configuration, nil when it can. The workflow works the target branch's
// RALPH_TASKS.md and knows no reviewers; every other setting it uses
// (--commit and --worktrees are how it always works: each task on its
// own branch, merged when done; --archive-done leaves RALPH_TASKS.md in
// place, as the local loop does).
func Refused(rc memory.RunConfig) error {
	switch {
	case rc.Plan != "":
		return fmt.Errorf("--engine temporal works the branch's %s; run the plan %s with the local engine", memory.TasksFile, rc.Plan)
	case rc.Review != "":
		return fmt.Errorf("--engine temporal has no reviewers, so it cannot run --review %s; run reviews with the local engine", rc.Review)
	}
	return RefusedRun(rc.Agent, rc.AgentArgs)
}
