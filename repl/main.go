package repl

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/assemble"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/scripts/screen/live"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/scripts/screen/view"
	"github.com/ralph-dev/ralph/scripts/slash"
)

// MainOptions are what the chat shell needs besides the opened project.
type MainOptions struct {
	Term terminal.Facts
	// Version goes in the banner.
	Version string
	// Notices are printed before the first prompt (crash recovered, ...).
	Notices []string
	// Queue and Coord, when set, are a task loop's, stopped by Ctrl-C:
	// the shell takes over its conversation instead of starting one.
	Queue *interrupts.Queue
	Coord *coordinator.Coordinator
	// Reopen, when set, is told the session /resume picked: the shell
	// leaves, and the caller opens that session as --resume does.
	Reopen func(id string)
	// RunArgs reads /run's flags into the session's task loop
	// configuration (the command line's table); nil: /run takes none.
	RunArgs func(args string) error
	// Plugin carries out /plugin ARGS as `ralph plugin` does (cli.PluginLine).
	Plugin func(args string, out io.Writer) error
}

// Main runs the interactive shell on an opened project until the person
// leaves, and returns the exit code.
func Main(ctx context.Context, p *project.Project, o MainOptions) int {
	queue := o.Queue
	// The style is decided before the line editor reads the terminal: in
	// auto it may ask the terminal, which answers on its input.
	style := o.Term.RenderStyle(p.Config.Style)
	var banner []string
	var replay string
	if queue == nil {
		queue = interrupts.NewQueue()
		banner = append(o.Notices, fmt.Sprintf("ralph %s · %s · session %s · /help for help, Ctrl-D to leave", o.Version, p.Config.Model, p.Session.ID))
		if p.Resumed {
			width, height := live.Size(o.Term.Width, o.Term.Height)
			replay = view.Replay(p.Fs, p.Root, p.Session.ID, view.ReplayTerm{Width: width, Height: height, Color: o.Term.Color, Style: style})
		}
	}
	var sh *Shell
	var confirm func(context.Context, string) bool
	coord := o.Coord
	ctl := loop.NewControl()
	// The task loop has its own queue, apart from the conversation's: a
	// conversation may run beside a paused loop, and a hard stop or a
	// message meant for one must never be taken by the other.
	loopQueue := interrupts.NewQueue()
	// A plain chat holds the project only while work runs, so that
	// beside it waiting at its prompt another ralph may work here (see
	// project.Hold). One a task loop stopped into (o.Coord) keeps it,
	// as the loop did.
	var hold func() (func(), string, error)
	reopen := "" // the session /resume picked
	if o.Coord == nil {
		hold = p.Hold
	}
	sh = New(Options{
		Control: ctl, LoopQueue: loopQueue, MCP: p.MCP.Status, LSP: p.Tools.LSP().States, Hold: hold,
		Skills: func() *skills.Set { return p.Skills },
		Undo: func(ctx context.Context, sel undo.Selection, force bool) (res *undo.Result, err error) {
			err = sh.holding(func() error {
				res, err = undo.InProject(ctx, p, sel, force)
				return err
			})
			return res, err
		},
		Fs: p.Fs, Root: p.Root, Door: p.Door, SessionID: p.Session.ID, Queue: queue,
		In: o.Term.In, Out: o.Term.Out, Err: o.Term.Err, Color: o.Term.Color, Style: style, Banner: banner, Replay: replay,
		// Asking the background (RenderStyle) read what was typed
		// meanwhile; the line editor gets it first.
		TypeAhead:   terminal.TypeAhead(),
		HistoryFile: filepath.Join(p.Root, memory.StateDir, "history"), Redact: p.Redactor.Redact,
		Loop: func(ctx context.Context) (string, error) {
			return assemble.TaskLoop(ctx, p, coord, loopQueue, ctl, confirm)
		},
		RunArgs: func(args string) error {
			if o.RunArgs == nil {
				return fmt.Errorf("/run takes no flags here")
			}
			return sh.holding(func() error { return o.RunArgs(args) })
		},
		Plan: func() error {
			return sh.holding(func() error {
				_, err := p.StartPlan()
				return err
			})
		},
		DropPlan: func() error { return sh.holding(p.DropPlan) },
		Handoff: func(ctx context.Context, goal string) (coordinator.Handoff, error) {
			return assemble.Handoff(ctx, p, coord, goal)
		},
		Bash: func(ctx context.Context, command string) (string, bool) {
			res := p.PersonCommand(ctx, command)
			coord.AddNote(project.BashNote(command, res.Output))
			return res.Output, res.IsError
		},
		Attach: p.WithMentions,
		Images: func(message string) string {
			message, shown := p.WithImages(message, coord.ModelName())
			coord.AttachImages(shown)
			return message
		},
		Models:      models.ForConfig(p.Config),
		CommandDirs: slash.PluginCommandDirs(p.Plugins),
		Commands: func(h *slash.Host) {
			h.Command, h.Definitions, h.Plugins = p.ShellLine, p.Definitions.Defs(), slash.PluginCommandDirs(p.Plugins)
			h.Plugin = o.Plugin
			if o.Reopen != nil && o.Coord == nil {
				h.Reopen = func(id string) {
					reopen = id
					o.Reopen(id)
				}
			}
			h.Live = func() report.Live {
				u := coord.Usage()
				return report.Live{SessionID: coord.SessionID(), LockHeld: p.Holding(), Model: coord.ModelName(),
					InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
			}
		},
	})
	// The policy asks at this shell's prompt while it runs (with --yes
	// only about leaving the sandbox), and another terminal may answer
	// with ralph answer, or steer the shell as its keys do.
	at := p.Attach(ctx, project.Face{Handle: sh.Handle, InStep: true, Queue: queue, Coord: coord, Asker: approvalAsker{sh: sh},
		Steer:  func(*coordinator.Coordinator) control.Target { return remote{s: sh} },
		Notify: sh.projectNote})
	defer at.Detach()
	coord = at.Coord
	confirm = sh.Confirm
	if at.Questions != nil {
		confirm = at.Questions.Confirmer(sh.Confirm)
	}
	if hold != nil {
		p.LetGoWhenIdle()
	}
	code := sh.Run(ctx, heldCoord{Coordinator: coord, s: sh})
	p.CloseConversation()
	// Leaving (Ctrl-C twice, Ctrl-D) keeps the conversation, and nothing
	// else on the screen says so or how to come back to it. A task
	// loop's shell (o.Coord) is the loop's to report on.
	if o.Coord == nil && reopen == "" && talked(coord.Messages()) {
		id := p.Session.CurrentID()
		latest, _ := memory.FindSession(p.Fs, p.Root, "")
		summary := view.ExitSummary(view.LoadSessionFacts(p.Fs, p.Root, id), latest == id)
		width, _ := live.Size(o.Term.Width, o.Term.Height)
		_, _ = io.WriteString(o.Term.Err, view.Lines(strings.Split(summary, "\n"), width))
	}
	return code
}

// talked reports whether the conversation holds a message of the person's.
func talked(msgs []conversation.Message) bool {
	for _, m := range msgs {
		if m.Role == conversation.RoleUser {
			return true
		}
	}
	return false
}
