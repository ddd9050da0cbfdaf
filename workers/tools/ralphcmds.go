package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// The commands ralph runs for the model outside the model's own tool
// calls go through the same tool door as the model's: a custom command's
// shell lines (!`…`) and the verify commands. Their PreToolUse and
// PostToolUse hooks fire as Bash with the command as written, through
// hooked, with the context the caller gives (the coordinator's
// RalphCall), so the person's guard sees every command ralph runs for
// the model (docs/hooks.md).

// ShellLine runs a custom command's shell line as the model's
// run_command runs a command: through the tool hooks ctx carries, then
// the one approval policy and the sandbox. A command a hook kept from
// running comes back beginning with NotRun, as one nobody approved does,
// so that the custom command sends nothing (scripts/slash).
func (t *Toolset) ShellLine(ctx context.Context, command string) workers.Result {
	args, err := json.Marshal(RunCommandParams{Command: command})
	if err != nil {
		return workers.Result{IsError: true, Output: NotRun + ": " + err.Error()}
	}
	ran := false
	res := t.Hooked(ctx, ToolRunCommand, args, func(ctx context.Context, args json.RawMessage) workers.Result {
		ran = true
		return t.call(ctx, ToolRunCommand, args)
	})
	if !ran && !strings.HasPrefix(res.Output, NotRun) {
		res.IsError, res.Output = true, NotRun+": "+res.Output
	}
	return res
}

// PersonLine runs a command the person typed at the chat prompt (`!cmd`,
// Claude Code's bash mode) through the tool hooks ctx carries, as Bash
// with the command as written, and in the session's sandbox, but not
// through the approval policy: the person typed it, which is their
// approval, as Claude Code runs it without asking. A PreToolUse hook
// that rewrites it sends the rewrite through the approval policy, as the
// model's run_command: the person did not type that. The output is
// redacted and bounded as run_command's is.
func (t *Toolset) PersonLine(ctx context.Context, command string) workers.Result {
	args, err := json.Marshal(RunCommandParams{Command: command})
	if err != nil {
		return workers.Result{IsError: true, Output: NotRun + ": " + err.Error()}
	}
	ran := false
	res := t.Hooked(ctx, ToolRunCommand, args, func(ctx context.Context, got json.RawMessage) workers.Result {
		ran = true
		var p RunCommandParams
		if json.Unmarshal(got, &p) != nil || p.Command != command || p.TimeoutS != nil || p.Unsandboxed {
			return t.call(ctx, ToolRunCommand, got)
		}
		if err := ctx.Err(); err != nil {
			return errResult("command cancelled before it ran")
		}
		t.ws.NoteWithheld()
		res := t.ws.Exec(ctx, command, t.ws.Timeout(), true)
		res.Output = workers.TruncateMiddle(t.opts.Redact.Redact(res.Output), t.ws.MaxOutput()+resultSlack)
		return res
	})
	if !ran && !strings.HasPrefix(res.Output, NotRun) {
		res.IsError, res.Output = true, NotRun+": "+res.Output
	}
	return res
}

// VerifyNotRun begins the result of a verify command that a PreToolUse
// hook kept from running as written: the verify did not pass.
const VerifyNotRun = "the verify command did not pass, since it did not run as written"

// Verify runs a verify command (a task's Verify: line, a plan's
// Validation Commands, the person's --verify) through the tool hooks ctx
// carries, as Bash with the command as written, as every command ralph
// runs for the model goes through them; then as workers.RunVerify runs
// it. A hook's deny fails the verify, and so does an updatedInput that
// changes the command: a verify decides whether the model's work is done,
// so a hook may stop it but never make it pass by running something else.
// A hook's "ask" goes to the one approval policy (hooked).
func (t *Toolset) Verify(ctx context.Context, command string, timeout time.Duration, unsandboxed bool) workers.Result {
	args, err := json.Marshal(RunCommandParams{Command: command})
	if err != nil {
		return workers.Result{IsError: true, Output: VerifyNotRun + ": " + err.Error()}
	}
	ran := false
	res := t.Hooked(ctx, ToolRunCommand, args, func(ctx context.Context, got json.RawMessage) workers.Result {
		var p RunCommandParams
		if json.Unmarshal(got, &p) != nil || p.Command != command || p.TimeoutS != nil || p.Unsandboxed {
			return workers.Result{IsError: true, Output: fmt.Sprintf("%s: a PreToolUse hook rewrote it (to %s), and a verify command passes only as written",
				VerifyNotRun, text.Clip(string(got), 200))}
		}
		ran = true
		return t.Workspace().RunVerify(ctx, command, timeout, unsandboxed)
	})
	if !ran {
		// A hook refused it, stopped it, or a person said no: whatever it
		// said, the verify did not pass.
		res.IsError = true
		if !strings.HasPrefix(res.Output, VerifyNotRun) {
			res.Output = VerifyNotRun + ": " + res.Output
		}
	}
	return res
}
