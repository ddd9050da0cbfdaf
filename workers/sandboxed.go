package workers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// FullAccessHint is how a person runs commands without the sandbox.
const FullAccessHint = "rerun ralph with --sandbox danger-full-access"

// sandboxUnavailable is the result of a command that did not run because
// the sandbox could not confine it.
func sandboxUnavailable(err error) Result {
	msg := err.Error()
	if errors.Is(err, sandbox.ErrUnavailable) {
		msg = fmt.Sprintf("%s. Commands run only inside the sandbox: to run them without it, the user can %s", msg, FullAccessHint)
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
	notes = append(notes, sandbox.UndoneNotes(o.Undone, "this command")...)
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
