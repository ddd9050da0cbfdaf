package engine

import (
	"fmt"
	"maps"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/ralph-dev/ralph/coordinator/loop/machine"
)

// A long run on Temporal. Temporal ends a workflow whose history passes
// 51,200 events or 50 MB; a task costs its run about 13 events (an
// attempt and an integration, each scheduled, started and completed, and
// the workflow tasks between), so one run holds some 3,800 tasks. Before
// that the loop continues as new: at a boundary with nothing in flight
// it hands the next run its state (Continued) and ends, and the next run
// goes on where it stopped, with the same session id and the events'
// numbering carried on. A client follows the workflow id's latest run
// (client.go), so it sees one run.
//
// The history's bytes stay in step with its events because an
// integration answers with a diff of the task file (taskdiff.go), not the
// file, which made the history grow with tasks squared.

// historyChange gates both, the diff and continue-as-new: workflows
// started before them replay with DefaultVersion and ask for the whole
// file each time, as their histories recorded.
const (
	historyChange  = "shorthistory"
	historyVersion = 1
)

// DefaultContinueAfterEvents and DefaultContinueAfterBytes are where a
// run continues as new: well under Temporal's limits (51,200 events, 50
// MB), since the attempts in flight finish first, and a history this
// long already takes a worker seconds to replay after its cache let the
// workflow go.
const (
	DefaultContinueAfterEvents = 20_000
	DefaultContinueAfterBytes  = 20 << 20
)

// takeOver sets up a run continued as new from the state the run before
// it handed over.
func (w *loopWF) takeOver(cfg *machine.Config) {
	c := w.in.Continued
	if c == nil {
		return
	}
	cfg.Continue = &c.Machine
	w.sessionID, w.eventBase = c.SessionID, c.EventBase
	w.messages, w.answers = slices.Clone(c.Messages), slices.Clone(c.Answers)
	maps.Copy(w.workedBy, c.WorkedBy)
}

// historyFull reports whether the run's history is long enough to
// continue as new.
func (w *loopWF) historyFull() bool {
	if !w.short {
		return false
	}
	info := workflow.GetInfo(w.ctx)
	n := info.GetCurrentHistoryLength()
	if w.historyLength != nil {
		n = w.historyLength(w.ctx)
	}
	limit := w.in.ContinueAfterEvents
	if limit <= 0 {
		limit = DefaultContinueAfterEvents
	}
	// A run continues only once it has begun an attempt: a limit under
	// what a run's start costs would otherwise continue run after run
	// and never work a task.
	return w.begun > 0 && (n >= limit || info.GetCurrentHistorySize() >= DefaultContinueAfterBytes)
}

// continueAsNew is the error that ends this run and starts the next with
// this one's state. It is called with nothing in flight, right after the
// control signals were drained, and takes the answers waiting too:
// Temporal drops the signals a run did not read when it continues.
func (w *loopWF) continueAsNew(answers workflow.ReceiveChannel) error {
	snap, err := w.m.Snapshot()
	if err != nil {
		return fmt.Errorf("cannot continue the run as new: %w", err)
	}
	pending := slices.Clone(w.answers)
	for {
		var a Answer
		if !answers.ReceiveAsync(&a) {
			break
		}
		pending = append(pending, a)
	}
	runs := 0
	if w.in.Continued != nil {
		runs = w.in.Continued.Runs
	}
	in := w.in
	in.Continued = &Continued{SessionID: w.sessionID, Machine: snap, EventBase: w.eventBase + len(w.events),
		Messages: slices.Clone(w.messages[w.delivered:]), Answers: pending, WorkedBy: w.workedBy, Runs: runs + 1}
	return workflow.NewContinueAsNewError(w.ctx, WorkflowName, in)
}
