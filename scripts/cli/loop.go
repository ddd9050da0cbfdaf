package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/scripts/notify"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// FinishLoop writes the end of a `ralph run`: the result object (json,
// stream-json) or a summary (text), and returns the exit code: 0 when no
// task failed and the loop ended as asked, 1 otherwise, 130/143 when
// interrupted.
//
// usage is the session's, and prior the session's record as the loop
// found it (zero for a new session): the result counts this run alone,
// with the session's totals under their own names, as a one-shot's does.
func (o *OneShot) FinishLoop(res loop.Result, sessionID string, took time.Duration, usage conversation.Usage, prior memory.State, counts memory.TaskCounts) int {
	o.Close()
	r := res.Final(sessionID, took, usage, prior, counts)
	code := ExitCode(r)
	if res.IsError && code == ExitOK {
		code = ExitFailed
	}
	if res.IsError && errors.Is(res.Err, rootfs.ErrTooLarge) {
		// A task list the run would have taken past what ralph reads
		// is bad input, as one already that large is: exit 2.
		code = ExitUsage
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
	notify.Write(o.Stderr, o.notifier.Notify(notify.Event{Event: notify.RunEnded, Text: r.Text, Reason: res.Reason,
		IsError: &isError, ExitCode: &code, Tasks: &counts}))
	o.notifier.Close()
	return code
}
