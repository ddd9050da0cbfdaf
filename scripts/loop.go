package scripts

import (
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// FinishLoop writes the end of a `ralph run`: the result object (json,
// stream-json) or a summary (text), and returns the exit code: 0 when no
// task failed and the loop ended as asked, 1 otherwise, 130/143 when
// interrupted.
func (o *OneShot) FinishLoop(res loop.Result, sessionID string, took time.Duration, usage conversation.Usage, counts memory.TaskCounts) int {
	o.Close()
	r := coordinator.Result{Subtype: coordinator.SubtypeSuccess, IsError: res.IsError, SessionID: sessionID,
		NumTurns: res.Stats.Iterations, Duration: took, Usage: usage, Err: res.Err, Signal: res.Signal}
	if res.Stats.CostUSD > 0 {
		c := res.Stats.CostUSD
		r.CostUSD = &c
	}
	// A loop's figures are its session's as the loop keeps them.
	r.SessionTurns, r.SessionUsage, r.SessionCostUSD = r.NumTurns, r.Usage, r.CostUSD
	switch {
	case res.Reason == loop.ReasonInterrupted:
		r.Subtype = coordinator.SubtypeInterrupted
	case res.Reason == loop.ReasonMaxIterations:
		r.Subtype = coordinator.SubtypeMaxTurns
	case res.IsError:
		r.Subtype = coordinator.SubtypeExecutionError
	}
	r.Text = loopSummary(res, counts)
	code := ExitCode(r)
	if res.IsError && code == ExitOK {
		code = ExitFailed
	}
	switch o.Format {
	case FormatJSON, FormatStreamJSON:
		j := NewResultJSON(r)
		j.Tasks, j.Reason = &counts, res.Reason
		o.enc.value(j)
	default:
		fmt.Fprintln(o.Stdout, text.StripControls(r.Text)) // task ids come from RALPH_TASKS.md
	}
	switch {
	case res.Err != nil:
		fmt.Fprintf(o.Stderr, "ralph: %s\n", text.StripControls(res.Err.Error()))
	case res.IsError && o.Format != FormatText:
		// Text output has the summary on stdout already; JSON's stderr
		// still gets its one sentence.
		fmt.Fprintf(o.Stderr, "ralph: %s\n", text.StripControls(r.Text))
	}
	isError := code != ExitOK
	writeNotification(o.Stderr, o.notifier.Notify(NotifyEvent{Event: NotifyRunEnded, Text: r.Text, Reason: res.Reason,
		IsError: &isError, ExitCode: &code, Tasks: &counts}))
	o.notifier.Close()
	return code
}

func loopSummary(res loop.Result, c memory.TaskCounts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d done, %d failed, %d open after %d iteration(s)", res.Reason, c.Done, c.Failed, c.Open+c.InProgress, res.Stats.Iterations)
	if len(res.Failed) > 0 {
		fmt.Fprintf(&b, "; failed this run: %s", strings.Join(res.Failed, ", "))
	}
	return b.String()
}
