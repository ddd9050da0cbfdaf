package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// RunCommandParams are run_command's arguments.
type RunCommandParams struct {
	Command     string   `json:"command" required:"true" description:"The bash command line to run."`
	TimeoutS    *float64 `json:"timeout_s" description:"Timeout in seconds (at most 3600)."`
	Unsandboxed bool     `json:"unsandboxed" description:"Run outside the sandbox. Only when the sandbox blocked something the task really needs; the user is asked every time."`
}

// runCommandTool's description is run_command.md and, when commands are
// confined, what the sandbox allows (sandboxDescription).
func (t *Toolset) runCommandTool() Tool {
	def := Def("run_command")
	def.Description += t.sandboxDescription()
	return NewTool(def, t.runCommand)
}

func (t *Toolset) runCommand(ctx context.Context, raw json.RawMessage) Result {
	var a RunCommandParams
	if err := decodeArgs(ToolRunCommand, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return errResult("run_command needs a non-empty command")
	}
	timeout := t.timeout
	if a.TimeoutS != nil {
		if *a.TimeoutS <= 0 || math.IsNaN(*a.TimeoutS) {
			return errResult("timeout_s must be a positive number of seconds")
		}
		timeout = maxCommandTimeout
		if *a.TimeoutS < maxCommandTimeout.Seconds() {
			timeout = time.Duration(*a.TimeoutS * float64(time.Second))
		}
	}

	if err := ctx.Err(); err != nil {
		return errResult("command cancelled before it ran")
	}
	t.noteWithheld()
	if a.Unsandboxed && t.policy.Confines() {
		return t.runUnsandboxed(ctx, a.Command, timeout)
	}
	d := t.approver.ApproveCommand(ctx, a.Command)
	if !d.Allowed {
		if ctx.Err() != nil {
			return errResult("command cancelled before it ran")
		}
		r := errResult("command was not run: %s", d.Reason)
		r.Denied = d.Unasked
		return r
	}
	return t.execute(ctx, a.Command, timeout, t.policy)
}

// WillAsk reports whether calling the tool name with args will ask a
// person first: run_command with a command no rule allows, when the
// approver can tell (Foreseer).
func (t *Toolset) WillAsk(name string, args json.RawMessage) bool {
	f, ok := t.approver.(Foreseer)
	if name != ToolRunCommand || !ok {
		return false
	}
	var a RunCommandParams
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Command) == "" {
		return false
	}
	if a.Unsandboxed && t.policy.Confines() {
		return f.WillAsk(UnsandboxedPrefix + a.Command)
	}
	return f.WillAsk(a.Command)
}

// noteWithheld tells the person, at the session's first command, which of
// their variables commands go without and how to pass one: a test suite
// that needs DATABASE_URL fails otherwise with no word why. Names only,
// never values.
func (t *Toolset) noteWithheld() {
	if len(t.opts.Withheld) == 0 || t.opts.Notify == nil || t.opts.withheldOnce == nil {
		return
	}
	t.opts.withheldOnce.Do(func() {
		t.opts.Notify(fmt.Sprintf("commands run without %s, which look like credentials; to pass one, list it in your user config: shell_env = [%q]",
			strings.Join(t.opts.Withheld, ", "), t.opts.Withheld[0]))
	})
}
