package workers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// fullAccessHint is how a person runs commands without the sandbox.
const fullAccessHint = "rerun ralph with --sandbox danger-full-access"

// sandboxDescription tells the model, in run_command's description, what
// its commands may do.
func (t *Toolset) sandboxDescription() string {
	if !t.policy.Confines() {
		return ""
	}
	s := fmt.Sprintf(" Commands run in a sandbox (%s): %s. Reading works everywhere.", t.policy.Mode, t.policy.Describe())
	if t.autoApprove {
		return s + " Commands cannot leave the sandbox in this session."
	}
	return s + ` Pass "unsandboxed": true only when the sandbox blocked something the task really needs; the user is asked each time.`
}

// runUnsandboxed handles run_command with "unsandboxed": true. The person
// is asked every time with the command prefixed by UnsandboxedPrefix,
// which no "always" rule covers. Under --yes nobody would see the
// question, so the request is refused instead of being approved blindly.
func (t *Toolset) runUnsandboxed(ctx context.Context, command string, timeout time.Duration) Result {
	if t.autoApprove {
		return errResult("command was not run: it asked to run outside the sandbox, which --yes never approves; " +
			"run it inside the sandbox, or the user can " + fullAccessHint)
	}
	d := t.approver.ApproveCommand(ctx, UnsandboxedPrefix+command)
	if !d.Allowed {
		if ctx.Err() != nil {
			return errResult("command cancelled before it ran")
		}
		return errResult("command was not run outside the sandbox: %s (to run commands outside the sandbox without being asked, the user can %s)", d.Reason, fullAccessHint)
	}
	return t.execute(ctx, command, timeout, nil)
}

// sandboxUnavailable is the result of a command that did not run because
// the sandbox could not confine it.
func sandboxUnavailable(err error) Result {
	msg := err.Error()
	if errors.Is(err, sandbox.ErrUnavailable) {
		msg = fmt.Sprintf("%s. Commands run only inside the sandbox: to run them without it, the user can %s", msg, fullAccessHint)
	}
	return errResult("[ralph: the command did not run: %s]", msg)
}

// confined adds what the sandbox has to say to a finished command's
// result: that its end is unknown (its helper died or stopped answering),
// that the sandbox blocked something (judged from the output), or that
// guarded paths it created were removed. A command that ralph killed
// (timeout, stop) has its own explanation already.
func confined(res Result, p *sandbox.Policy, o sandbox.Outcome, output string, killed bool) Result {
	var notes []string
	if o.Err != nil && !killed {
		res.IsError = true
		notes = append(notes, fmt.Sprintf("[ralph: %v]", o.Err))
	}
	if len(o.Removed) > 0 {
		notes = append(notes, fmt.Sprintf("[ralph: the sandbox removed %s, which this command created: git would run or read it outside the sandbox]",
			strings.Join(o.Removed, ", ")))
	}
	if len(o.Restored) > 0 {
		notes = append(notes, fmt.Sprintf("[ralph: the sandbox put back %s, which this command changed: git would run or read it outside the sandbox]",
			strings.Join(o.Restored, ", ")))
	}
	for _, u := range o.Undone {
		notes = append(notes, fmt.Sprintf("[ralph: the sandbox took back %s in %s, which this command set: git would run it outside the sandbox]",
			strings.Join(u.Keys, ", "), u.File))
	}
	if note := p.Explain(output); note != "" {
		notes = append(notes, note)
	}
	if len(notes) == 0 {
		return res
	}
	if !strings.HasSuffix(res.Output, "\n") {
		res.Output += "\n"
	}
	res.Output += strings.Join(notes, "\n")
	return res
}
