package scripts

import (
	"context"
	"fmt"
	"io"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory/text"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/scripts/commands"
	"github.com/ralph-dev/ralph/scripts/terminal"
)

// ScriptOptions says how to run chat lines without a person.
type ScriptOptions struct {
	Format    string
	KeepGoing bool
	// Progress shows progress on standard error (a terminal).
	Progress bool
}

// ScriptMain runs chat lines from in, one step at a time, on an opened
// project: `ralph script FILE` and `ralph chat < FILE`. Nobody at a
// terminal is asked for approval here: --yes approves everything, the
// commands allowed "always" run (the project applies those), and any other
// waits for ralph answer from another terminal, or is refused with
// --no-wait.
func ScriptMain(ctx context.Context, p *project.Project, in io.Reader, o ScriptOptions, t terminal.Facts) int {
	queue := interrupts.NewQueue()
	stopSignals := interrupts.NotifySignals(ctx, queue)
	defer stopSignals()
	sc := &Script{
		Format: o.Format, Stdout: t.Out, Stderr: t.Err, StderrTTY: o.Progress, Color: t.Color,
		KeepGoing: o.KeepGoing, Model: p.Config.Model, Cwd: p.Root, SessionID: p.Session.ID, Queue: queue,
	}
	coord := p.Coordinator(queue, sc.Handle)
	// The task loop a script's /run starts can be paused from another
	// terminal; the conversation's messages and stops share its queue.
	ctl := coordinator.NewLoopControl()
	questions := p.Serve(control.Steer{Queue: queue, Loop: ctl}, func(s string) { fmt.Fprintln(t.Err, "ralph: "+text.StripControls(s)) })
	if a := p.Asker(questions, nil); a != nil {
		p.Approval.SetAsker(a)
		defer p.Approval.SetAsker(nil)
	}
	var typed []string
	sc.Run = coord.Run
	sc.Host = &commands.Host{Fs: p.Fs, Root: p.Root, Coord: coord, SessionID: p.Session.ID, Undo: p.Undo, MCP: p.MCP.Status,
		History: func(n int) []string { return typed[max(0, len(typed)-n):] },
		Loop: func(ctx context.Context) (string, error) {
			return p.TaskLoop(ctx, coord, queue, ctl, nil)
		}}
	steps := NewStepReader(in)
	code := sc.Steps(ctx, func() (Step, error) {
		st, err := steps.Next()
		if err == nil {
			typed = append(typed, st.Text)
		}
		return st, err
	})
	p.CloseConversation()
	return code
}
