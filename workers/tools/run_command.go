package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/workers"
)

// RunCommandParams are run_command's arguments.
type RunCommandParams struct {
	Command     string   `json:"command" required:"true" description:"The bash command line to run."`
	TimeoutS    *float64 `json:"timeout_s" description:"Timeout in seconds (at most 3600)."`
	Unsandboxed bool     `json:"unsandboxed" description:"Run outside the sandbox. Only when the sandbox blocked something the task really needs; the user is asked every time."`
	Background  bool     `json:"background" description:"Start the command in the background and return at once with its id (a server, a watcher, a long build); read its output with command_output and stop it with stop_command. It has no timeout and ends with the session."`
}

// runCommandTool's description is run_command.md and, when commands are
// confined, what the sandbox allows (sandboxDescription).
func (t *Toolset) runCommandTool() Tool {
	def := Def("run_command")
	def.Description += t.sandboxDescription()
	return NewTool(def, t.runCommand)
}

// NotRun begins run_command's result for a command that was not run
// (refused, not approved): a custom command's shell lines, run through
// run_command, are not sent when one was not run.
const NotRun = "command was not run"

func (t *Toolset) runCommand(ctx context.Context, raw json.RawMessage) workers.Result {
	var a RunCommandParams
	if err := decodeArgs(ToolRunCommand, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return errResult("run_command needs a non-empty command")
	}
	timeout := t.ws.Timeout()
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
	// The note of the variables withheld comes after the first command,
	// not before its approval question, where it stood in the way.
	defer t.ws.NoteWithheld()
	if a.Unsandboxed && t.ws.Policy().Confines() {
		return t.runUnsandboxed(ctx, a.Command, timeout, a.Background)
	}
	d := t.approver.ApproveCommand(ctx, a.Command)
	if !d.Allowed {
		if ctx.Err() != nil {
			return errResult("command cancelled before it ran")
		}
		r := errResult("%s: %s", NotRun, d.Reason)
		r.Denied = d.Unasked
		return r
	}
	if a.Background {
		return t.ws.StartBackground(a.Command, true, CallerOf(ctx).Agent)
	}
	return t.ws.Exec(ctx, a.Command, timeout, true)
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
	if a.Unsandboxed && t.ws.Policy().Confines() {
		return f.WillAsk(UnsandboxedPrefix + a.Command)
	}
	return f.WillAsk(a.Command)
}

// sandboxDescription tells the model, in run_command's description, what
// its commands may do.
func (t *Toolset) sandboxDescription() string {
	if !t.ws.Policy().Confines() {
		return ""
	}
	s := fmt.Sprintf(" Commands run in a sandbox (%s): %s. Reading works everywhere.", t.ws.Policy().Mode, t.ws.Policy().Describe())
	if t.autoApprove {
		return s + " Commands cannot leave the sandbox in this session."
	}
	return s + ` Pass "unsandboxed": true only when the sandbox blocked something the task really needs; the user is asked each time.`
}

// runUnsandboxed handles run_command with "unsandboxed": true. The person
// is asked every time with the command prefixed by UnsandboxedPrefix,
// which no "always" rule covers. Under --yes nobody would see the
// question, so the request is refused instead of being approved blindly.
func (t *Toolset) runUnsandboxed(ctx context.Context, command string, timeout time.Duration, background bool) workers.Result {
	if t.autoApprove {
		return errResult("command was not run: it asked to run outside the sandbox, which --yes never approves; " +
			"run it inside the sandbox, or the user can " + workers.FullAccessHint)
	}
	d := t.approver.ApproveCommand(ctx, UnsandboxedPrefix+command)
	if !d.Allowed {
		if ctx.Err() != nil {
			return errResult("command cancelled before it ran")
		}
		return errResult("command was not run outside the sandbox: %s (to run commands outside the sandbox without being asked, the user can %s)", d.Reason, workers.FullAccessHint)
	}
	if background {
		return t.ws.StartBackground(command, false, CallerOf(ctx).Agent)
	}
	return t.ws.Exec(ctx, command, timeout, false)
}
