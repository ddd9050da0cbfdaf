package loop

import (
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// Final is the result a loop's end amounts to, in the shape of a run's
// (coordinator.Result): the loop publishes it as its last event, so that
// events.jsonl, `ralph watch --json` and every other reader of the event
// stream can tell how the loop ended, as they can for a one-shot; and the
// face of `ralph run` prints the same result. num_turns counts the loop's
// iterations; usage and cost are the session's.
func (r Result) Final(sessionID string, took time.Duration, usage conversation.Usage, counts memory.TaskCounts) coordinator.Result {
	f := coordinator.Result{Subtype: coordinator.SubtypeSuccess, IsError: r.IsError, SessionID: sessionID,
		NumTurns: r.Stats.Iterations, Duration: took, Usage: usage, Err: r.Err, Signal: r.Signal, Text: r.Summary(counts)}
	if r.Stats.CostUSD > 0 {
		c := r.Stats.CostUSD
		f.CostUSD = &c
	}
	switch {
	case r.Reason == ReasonInterrupted:
		f.Subtype = coordinator.SubtypeInterrupted
	case r.Reason == ReasonMaxIterations:
		f.Subtype = coordinator.SubtypeMaxTurns
	case r.IsError:
		f.Subtype = coordinator.SubtypeExecutionError
	}
	return f
}

// Summary is the loop's end in one line: why it ended and the tasks.
func (r Result) Summary(c memory.TaskCounts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d done, %d failed, %d open after %d iteration(s)", r.Reason, c.Done, c.Failed, c.Open+c.InProgress, r.Stats.Iterations)
	if len(r.Failed) > 0 {
		fmt.Fprintf(&b, "; failed this run: %s", strings.Join(r.Failed, ", "))
	}
	return b.String()
}
