package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/scripts/slash"
)

// A prompt whose text starts with /NAME, NAME one of the commands the
// session advertised (available_commands_update), runs that command as
// chat runs it: a built-in through slash.Dispatch, its output sent back
// as the agent's message and the message it sends (/init's) run as the
// turn; a custom command through the one expansion of scripts/slash, its
// shell lines run through the approval policy (asked as
// session/request_permission) and the sandbox, its model and its
// allowed-tools for that turn only. Any other prompt goes to the model
// as written, a slash included.

// advertised reports whether line names a command the session
// advertises.
func (ss *session) advertised(line string) bool {
	if !slash.IsCommand(line) {
		return false
	}
	name, _ := slash.Parse(line)
	return slices.ContainsFunc(ss.commands(), func(c sdk.AvailableCommand) bool { return c.Name == name })
}

// host is the slash commands' view of the session: no terminal, its
// questions asked as permission requests.
func (ss *session) host(out *strings.Builder) *slash.Host {
	p := ss.p
	return &slash.Host{Fs: p.Fs, Root: p.Root, Door: p.Door, Out: out, Coord: ss.at.Coord, SessionID: p.Session.ID,
		MCP: p.MCP.Status, Models: models.ForConfig(p.Config), Command: p.ShellLine, Plugins: slash.PluginCommandDirs(p.Plugins),
		Skills: func() *skills.Set { return p.Skills }, Definitions: p.Definitions.Defs(), Confirm: ss.confirm,
		// The prompt holds the project while the command runs.
		Undo: func(ctx context.Context, sel undo.Selection, force bool) (*undo.Result, error) {
			return undo.InProject(ctx, p, sel, force)
		}}
}

// runCommand runs the command line names; the prompt holds the project.
// A command's error is said to the person as the agent's message: the
// prompt itself succeeded.
func (ss *session) runCommand(ctx context.Context, line string) event.Result {
	var out strings.Builder
	o, err := slash.Dispatch(ctx, ss.host(&out), line)
	if err == nil && o.Job != nil {
		var said string
		said, err = o.Job(ctx)
		out.WriteString(said)
	}
	if err == nil && o.Ask != "" && o.Send != "" && !ss.confirm(ctx, o.Ask) {
		fmt.Fprintf(&out, "\nNothing was sent: the answer was no.\n")
		o.Send, o.Prepare = "", nil
	}
	if err != nil {
		fmt.Fprintf(&out, "%s\n", err)
	}
	if s := out.String(); s != "" {
		ss.out.send(sdk.UpdateAgentMessageText(s))
	}
	if err != nil || (o.Send == "" && o.Prepare == nil) {
		return event.Result{}
	}
	ctx = o.Scoped(ctx)
	send := o.Send
	if o.Prepare != nil {
		// A custom command's shell lines run now, asked about as the
		// model's commands are.
		if send, err = o.Prepare(ctx); err != nil {
			ss.out.send(sdk.UpdateAgentMessageText(err.Error() + "\n"))
			return event.Result{}
		}
	}
	coord := ss.at.Coord
	if o.Model != "" {
		old := coord.ModelName()
		coord.SetModel(o.Model)
		defer coord.SetModel(old)
	}
	return coord.RunNarrowed(ctx, send, o.Tools)
}
