package loop

import (
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// Final is the result a loop's end amounts to, in the shape of a run's
// (event.Result): the loop publishes it as its last event, so that
// events.jsonl, `ralph watch --json` and every other reader of the event
// stream can tell how the loop ended, as they can for a one-shot; and the
// face of `ralph run` prints the same result. num_turns counts the loop's
// iterations. usage is the session's, and prior the session's record as
// the loop found it (zero for a new session): the result counts this run
// alone, with the session's totals under their own names, as a
// one-shot's does.
func (r Result) Final(sessionID string, took time.Duration, usage conversation.Usage, prior memory.State, counts memory.TaskCounts) event.Result {
	f := event.Result{Subtype: event.SubtypeSuccess, IsError: r.IsError, SessionID: sessionID,
		NumTurns: r.Stats.Iterations - prior.Iteration, Duration: took, Usage: usage.Sub(prior.Usage), Err: r.Err, Signal: r.Signal,
		SessionTurns: r.Stats.Iterations, SessionUsage: usage, Text: r.Summary(counts)}
	if r.Stats.CostUSD > 0 {
		total, run := r.Stats.CostUSD, r.Stats.CostUSD
		if prior.CostUSD != nil {
			run = text.RoundUSD(run - *prior.CostUSD)
		}
		f.SessionCostUSD, f.CostUSD = &total, &run
	}
	switch {
	case r.Reason == ReasonInterrupted:
		f.Subtype = event.SubtypeInterrupted
	case r.Reason == ReasonMaxIterations:
		f.Subtype = event.SubtypeMaxIterations
	case r.IsError:
		f.Subtype = event.SubtypeExecutionError
	}
	return f
}

// Summary is the loop's end in one line: why it ended and the tasks.
func (r Result) Summary(c memory.TaskCounts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d done, %d failed, %d open after %s", r.Reason, c.Done, c.Failed, c.Open+c.InProgress, text.Counted(r.Stats.Iterations, "iteration", "iterations"))
	if len(r.Failed) > 0 {
		fmt.Fprintf(&b, "; failed this run: %s", strings.Join(r.Failed, ", "))
	}
	return b.String()
}
