package loop

import (
	"context"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// verifyOutputLimit bounds the verify output an event keeps: its end,
// where a test runner says what failed, is what a report shows.
const verifyOutputLimit = 2000

// verify runs an attempt's verify commands in order, up to the first
// that does not pass (RunChecks).
func (l *loop) verify(ctx context.Context, ws Workspace, cmds []string) (*event.VerifyRun, string, string) {
	return RunChecks(ctx, l.o.Verify, ws, cmds)
}

// RunChecks runs an attempt's verify commands with run, in order, up to
// the first that does not pass, and returns the record of the run for
// the attempt's end event, the full output, and the command that did
// not pass ("" when all did). Both hosts run them so (the Temporal
// attempt too), and machine.Settle words what they found.
func RunChecks(ctx context.Context, run func(ctx context.Context, ws Workspace, command string) (bool, string), ws Workspace, cmds []string) (*event.VerifyRun, string, string) {
	start := time.Now()
	var outputs []string
	failed := ""
	for _, cmd := range cmds {
		ok, output := false, "ralph cannot run verify commands here"
		if run != nil {
			ok, output = run(ctx, ws, cmd)
		}
		if len(cmds) > 1 {
			output = "$ " + cmd + "\n" + output
		}
		outputs = append(outputs, output)
		if !ok {
			failed = cmd
			break
		}
	}
	output := strings.Join(outputs, "\n")
	return &event.VerifyRun{OK: failed == "", DurationMS: time.Since(start).Milliseconds(), Output: text.Tail(output, verifyOutputLimit)}, output, failed
}

// verified is the event that says how an attempt's verify commands went:
// every face shows a passing verify as a line, as it shows a failing one.
// failed is the command that did not pass, "" when all did.
func verified(d attemptDone, run *event.VerifyRun, failed string) event.Event {
	what := failed
	if what == "" {
		what = strings.Join(d.checks, " && ")
	}
	return event.Event{Type: event.Verified, Text: what, Task: d.task.ID, IsError: !run.OK,
		TaskAttempt: &event.TaskAttempt{Number: d.attempt, Verify: run}}
}

// attemptEnded is the task_changed event that ends an attempt: the task's
// new state, with the attempt's number, what it spent, its verification
// and why it failed, so a session's own record holds its task timeline.
func attemptEnded(d attemptDone, state planfile.TaskState, verify *event.VerifyRun, failure string) event.Event {
	usage := d.out.Usage
	return event.Event{Type: event.TaskChanged, Text: d.task.ID + " " + string(state), Output: d.task.Title, Task: d.task.ID,
		TaskAttempt: &event.TaskAttempt{Number: d.attempt, Verify: verify, Error: text.Clip(failure, 1000)},
		Usage:       &usage, CostUSD: d.out.CostUSD}
}
