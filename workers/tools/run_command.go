package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/workers"
)

// RunCommandParams are run_command's arguments.
type RunCommandParams struct {
	Command     string   `json:"command" required:"true" description:"The bash command line to run."`
	Workdir     string   `json:"workdir" description:"Directory to run it in, relative to the project root (or absolute inside it). Default: the project root."`
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

	wd, r, ok := t.commandDir(a.Workdir)
	if !ok {
		return r
	}

	if err := ctx.Err(); err != nil {
		return errResult("command cancelled before it ran")
	}
	// The approver shows the person the directory beside the command,
	// and reads the paths the command names from there.
	ask := WithWorkdir(ctx, wd.rel)
	if a.Unsandboxed && t.ws.Policy().Confines() {
		return t.runUnsandboxed(ctx, ask, wd, a.Command, timeout, a.Background)
	}
	d := t.approver.ApproveCommand(ask, a.Command)
	if !d.Allowed {
		if ctx.Err() != nil {
			return errResult("command cancelled before it ran")
		}
		r := errResult("%s: %s", NotRun, d.Reason)
		r.Denied = d.Unasked
		return r
	}
	if a.Background {
		return t.ran(ctx, t.ws.StartBackgroundIn(wd.real, a.Command, true, CallerOf(ctx).Agent))
	}
	return t.ran(ctx, t.ws.ExecIn(ctx, wd.real, a.Command, timeout, true))
}

// ran is the result of a command that ran, after which the note of the
// variables withheld comes (Workspace.NoteWithheld): not before its
// approval question, where it stood in the way, and not after a command
// the person declined or stopped, where it came between their answer and
// the model's (issue 92).
func (t *Toolset) ran(ctx context.Context, r workers.Result) workers.Result {
	if ctx.Err() == nil {
		t.ws.NoteWithheld()
	}
	return r
}

// workdir is the directory a command runs in: real, absolute with its
// links resolved, and rel, relative to the project root and slash
// separated; both "" for the root.
type workdir struct{ real, rel string }

// commandDir resolves run_command's workdir through the door the file
// tools use: a path outside the project, a link out of it, ~, .git and
// .ralph (as named or as a link inside the project leads) and what is
// kept from the model are refused with the file tools' sentences, and
// the directory must exist. ok is false with the refusal.
func (t *Toolset) commandDir(p string) (workdir, workers.Result, bool) {
	if p == "" {
		return workdir{}, workers.Result{}, true
	}
	const action = "run a command in"
	rel, display, err := t.ws.Lexical(p)
	if err != nil {
		return workdir{}, pathResult(p, err), false
	}
	if workers.IsProtected(rel) {
		return workdir{}, refusal(action, p, display, workers.ErrProtected), false
	}
	real, _, err := t.ws.Resolve(p)
	if err != nil {
		return workdir{}, refusal(action, p, display, err), false
	}
	if workers.IsProtected(t.ws.RelSlash(real)) {
		return workdir{}, refusal(action, p, display, workers.ErrProtected), false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return workdir{}, fsErrorResult(action, display, err), false
	}
	if !fi.IsDir() {
		return workdir{}, errResult("cannot %s %s: it is not a directory", action, display), false
	}
	if real == t.ws.Root() {
		return workdir{}, workers.Result{}, true
	}
	return workdir{real: real, rel: t.ws.RelSlash(real)}, workers.Result{}, true
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
	wd, _, ok := t.commandDir(a.Workdir)
	if !ok {
		return false // refused before anyone is asked
	}
	ctx := WithWorkdir(context.Background(), wd.rel)
	if a.Unsandboxed && t.ws.Policy().Confines() {
		return f.WillAsk(ctx, UnsandboxedPrefix+a.Command)
	}
	return f.WillAsk(ctx, a.Command)
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
// ask is ctx with the command's directory for the approver.
func (t *Toolset) runUnsandboxed(ctx, ask context.Context, wd workdir, command string, timeout time.Duration, background bool) workers.Result {
	if t.autoApprove {
		return errResult("command was not run: it asked to run outside the sandbox, which --yes never approves; " +
			"run it inside the sandbox, or the user can " + workers.FullAccessHint)
	}
	d := t.approver.ApproveCommand(ask, UnsandboxedPrefix+command)
	if !d.Allowed {
		if ctx.Err() != nil {
			return errResult("command cancelled before it ran")
		}
		return errResult("command was not run outside the sandbox: %s (to run commands outside the sandbox without being asked, the user can %s)", d.Reason, workers.FullAccessHint)
	}
	if background {
		return t.ran(ctx, t.ws.StartBackgroundIn(wd.real, command, false, CallerOf(ctx).Agent))
	}
	return t.ran(ctx, t.ws.ExecIn(ctx, wd.real, command, timeout, false))
}
