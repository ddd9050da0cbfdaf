// Package machine holds the task loop's orchestration as one
// deterministic state machine: which attempts start, how each one ends
// (done, retried, failed, waiting out a limit), the circuit breaker and
// its question, the stop conditions, "nothing left", the figures the
// conditions see, and the events and decision records that say so. It
// does no I/O, reads no clock (every method takes the time), starts no
// goroutine and never ranges over a map, so the same code runs in the
// local loop (loop.Run, the goroutine host) and in the Temporal workflow
// (ralph-temporal/engine, where a replay must decide alike). Its methods
// return effects that the host carries out, one case per effect kind.
//
// The rules themselves (policy, retry settlement, readiness, the breaker's
// states, the final reason) stay in decide; this package is the
// bookkeeping around them that both hosts used to write on their own.
package machine

import (
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// Kind names what an effect asks the host to do.
type Kind int

const (
	// Start: begin attempt Attempt at Task (local: mark it in progress
	// and run a worker; Temporal: start the attempt activity).
	Start Kind = iota + 1
	// Emit: publish Event (the host stamps its time and session).
	Emit
	// Record: write Decision to decisions.jsonl (local: a decision
	// event the recorder writes; Temporal: the same event, which the
	// client that follows the workflow records).
	Record
	// Save: write the session's state (Status; Current is the task
	// that just started, if any).
	Save
	// Ask: put Question to a person; an answer goes to Answer, and
	// nobody answering in time is Default.
	Ask
	// Commit: write Task's new State into the task file (the local
	// tracker, or the target branch through the integration activity).
	Commit
	// Look: see whether the file system a full disk stopped the loop on
	// has space again, and put back what the full disk held (a task's
	// mark, a task left in progress); the answer goes to Space.
	Look
)

// Effect is one thing the host does for the machine.
type Effect struct {
	Kind     Kind
	Task     planfile.Task
	Attempt  int
	State    planfile.TaskState
	Event    event.Event
	Decision memory.DecisionRecord
	Status   string
	Current  string
	Question string
	Default  bool
	// Cause says why a Commit happens, which hosts that write the task
	// file only at some ends (Temporal) need.
	Cause Cause
}

// Cause is why a task's state is committed.
type Cause string

const (
	// Settled: a failed attempt settled (retry, failed, abort).
	Settled Cause = "settled"
	// LimitCut: a limit cut the attempt short; the task goes back to
	// open without spending a retry.
	LimitCut Cause = "limit"
	// StopCut: a stop cut the attempt short.
	StopCut Cause = "stop"
	// ConfigCut: the model is configured wrongly; the attempt is taken
	// back (Attempt is the number before it).
	ConfigCut Cause = "config"
	// DiskCut: a full disk cut the attempt short; the task goes back to
	// open without spending a retry.
	DiskCut Cause = "disk"
)

// Step is what the machine asks after a boundary or an input: effects in
// order, then either the end of the loop, or how long the host may wait
// for an input (an attempt's end, a control op, an answer) before it
// calls Next again (0: until an input arrives).
type Step struct {
	Effects []Effect
	// Wait: call Next again after it even when nothing arrived.
	Wait time.Duration
	// Idle: paused with nothing in flight; only a control op wakes it.
	Idle bool
	// Asking: an Ask is pending; the host waits for Answer (or gives
	// the default after its timeout).
	Asking bool
	End    *End
}

// End is how the loop ended.
type End struct {
	Reason  string
	IsError bool
	Err     error
}

func (s *Step) add(e Effect) { s.Effects = append(s.Effects, e) }

func (s *Step) emit(ev event.Event) { s.add(Effect{Kind: Emit, Event: ev}) }

func (s *Step) record(d memory.DecisionRecord) { s.add(Effect{Kind: Record, Decision: d}) }

func (s *Step) save(status, current string) {
	s.add(Effect{Kind: Save, Status: status, Current: current})
}

// Kinds lists every effect kind, for the hosts' tests that check each
// has its case.
func Kinds() []Kind { return []Kind{Start, Emit, Record, Save, Ask, Commit, Look} }

func (k Kind) String() string {
	switch k {
	case Start:
		return "start"
	case Emit:
		return "emit"
	case Record:
		return "record"
	case Save:
		return "save"
	case Ask:
		return "ask"
	case Commit:
		return "commit"
	case Look:
		return "look"
	}
	return "unknown"
}
