package project

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// errNoHookDoor is a command ralph would run for the model before the
// session's coordinator exists, while the session has tool hooks: the
// hooks' fields come from the coordinator, and a guard that cannot fire
// guards nothing, so the command does not run.
var errNoHookDoor = errors.New("the session's tool hooks cannot fire before its conversation starts, and a guard that does not fire guards nothing")

// RalphCall is ctx carrying the session's tool hooks for a command ralph
// runs for the model outside the model's own tool calls (a custom
// command's shell line, a verify command): the person's PreToolUse guard
// sees it at the one tool door, as Bash, as it sees the model's commands
// (docs/hooks.md). kind names the command in the id the hooks are given.
func (p *Project) RalphCall(ctx context.Context, kind string) (context.Context, error) {
	if c := p.warnTo.Load(); c != nil {
		return c.RalphCall(ctx, kind), nil
	}
	if tools.HasToolHooks(p.Hooks) {
		return ctx, errNoHookDoor
	}
	return ctx, nil
}

// ShellLine runs a custom command's shell line (!`…`, scripts/slash) as
// the model's run_command runs a command: through the session's tool
// hooks and the one approval policy (asked at the face, refused where
// nobody can answer unless -y or a rule allows it), and in the session's
// sandbox. A command file of the project is text the model could have
// written, so what it runs is never trusted more than the model.
func (p *Project) ShellLine(ctx context.Context, command string) workers.Result {
	hctx, err := p.RalphCall(ctx, "shell")
	if err != nil {
		return workers.Result{IsError: true, Output: tools.NotRun + ": " + err.Error()}
	}
	p.git.BeforeCommand(ctx)
	return p.Tools.ShellLine(hctx, command)
}

// PersonCommand runs a command the person typed at the chat prompt
// (`!cmd`, Claude Code's bash mode) through the session's tool hooks and
// in its sandbox, without asking: the person typed it (tools.PersonLine).
func (p *Project) PersonCommand(ctx context.Context, command string) workers.Result {
	hctx, err := p.RalphCall(ctx, "bash")
	if err != nil {
		return workers.Result{IsError: true, Output: tools.NotRun + ": " + err.Error()}
	}
	p.git.BeforeCommand(ctx)
	return p.Tools.PersonLine(hctx, command)
}

// BashNote is what the model reads, before the person's next message, of
// a command the person ran at the prompt (`!cmd`), in the words Claude
// Code's bash mode gives its model: the command and its output, which is
// the person's context, not a request.
func BashNote(command, output string) string {
	return "[ralph: the user ran this command at the prompt themselves (bash mode); its output is for your context, not a request]\n<bash-input>" +
		command + "</bash-input>\n<bash-output>\n" + strings.TrimRight(output, "\n") + "\n</bash-output>"
}

// Verify runs a verify command in where (the project's tools, or a
// task's worktree's) through the session's tool hooks (tools.Verify):
// a hook may stop it, never make it pass.
func (p *Project) Verify(ctx context.Context, where *tools.Toolset, command string, timeout time.Duration, unsandboxed bool) workers.Result {
	hctx, err := p.RalphCall(ctx, "verify")
	if err != nil {
		return workers.Result{IsError: true, Output: tools.VerifyNotRun + ": " + err.Error()}
	}
	return where.Verify(hctx, command, timeout, unsandboxed)
}
