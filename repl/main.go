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
	// The task loop has its own queue, apart from the conversation's: a
	// conversation may run beside a paused loop, and a hard stop or a
	// message meant for one must never be taken by the other.
	c := &chat{p: p, o: o, coord: o.Coord, ctl: loop.NewControl(), loopQueue: interrupts.NewQueue()}
	// A plain chat holds the project only while work runs, so that
	// beside it waiting at its prompt another ralph may work here (see
	// project.Hold). One a task loop stopped into (o.Coord) keeps it,
	// as the loop did.
	var hold func() (func(), string, error)
	if o.Coord == nil {
		hold = p.Hold
	}
	opts := Options{
		Control: c.ctl, LoopQueue: c.loopQueue, MCP: p.MCP.Status, LSP: p.Tools.LSP().States, Hold: hold,
		Skills: func() *skills.Set { return p.Skills },
		Fs:     p.Fs, Root: p.Root, Door: p.Door, SessionID: p.Session.ID, Queue: queue,
		In: o.Term.In, Out: o.Term.Out, Err: o.Term.Err, Color: o.Term.Color, Style: style, Banner: banner, Replay: replay,
		// Asking the background (RenderStyle) read what was typed
		// meanwhile; the line editor gets it first.
		TypeAhead:   terminal.TypeAhead(),
		HistoryFile: filepath.Join(p.Root, memory.StateDir, "history"), Redact: p.Redactor.Redact,
		Attach:      p.WithMentions,
		Models:      models.ForConfig(p.Config),
		CommandDirs: slash.PluginCommandDirs(p.Plugins),
		Commands:    c.commands,
	}
	c.workHooks(&opts)
	c.sh = New(opts)
	// The policy asks at this shell's prompt while it runs (with --yes
	// only about leaving the sandbox), and another terminal may answer
	// with ralph answer, or steer the shell as its keys do.
	sh := c.sh
	at := p.Attach(ctx, project.Face{Handle: sh.Handle, InStep: true, Queue: queue, Coord: c.coord, Asker: approvalAsker{sh: sh},
		Steer:  func(*coordinator.Coordinator) control.Target { return remote{s: sh} },
		Notify: sh.projectNote})
	defer at.Detach()
	c.coord = at.Coord
	c.confirm = sh.Confirm
	if at.Questions != nil {
		c.confirm = at.Questions.Confirmer(sh.Confirm)
	}
	if hold != nil {
		p.LetGoWhenIdle()
	}
	code := sh.Run(ctx, heldCoord{Coordinator: c.coord, s: sh})
	p.CloseConversation()
	c.sayHowToComeBack()
	return code
}

// chat is what Main's hooks share: the shell and the coordinator are made
// after the hooks that use them (the coordinator is the one the project's
// attach returns), so the hooks read them here when they run.
type chat struct {
	p         *project.Project
	o         MainOptions
	sh        *Shell
	coord     *coordinator.Coordinator
	confirm   func(context.Context, string) bool
	ctl       *loop.Control
	loopQueue *interrupts.Queue
	reopen    string // the session /resume picked
}

// workHooks sets the shell's hooks that do the work its commands ask
// for: undo, the task loop, plans, handoffs, shell commands and images.
// Those that change the project hold it while they run (sh.holding).
func (c *chat) workHooks(opts *Options) {
	p, o := c.p, c.o
	opts.Undo = func(ctx context.Context, sel undo.Selection, force bool) (res *undo.Result, err error) {
		err = c.sh.holding(func() error {
			res, err = undo.InProject(ctx, p, sel, force)
			return err
		})
		return res, err
	}
	opts.Loop = func(ctx context.Context) (string, error) {
		return assemble.TaskLoop(ctx, p, c.coord, c.loopQueue, c.ctl, c.confirm)
	}
	opts.RunArgs = func(args string) error {
		if o.RunArgs == nil {
			return fmt.Errorf("/run takes no flags here")
		}
		return c.sh.holding(func() error { return o.RunArgs(args) })
	}
	opts.Plan = func() error {
		return c.sh.holding(func() error {
			_, err := p.StartPlan()
			return err
		})
	}
	opts.DropPlan = func() error { return c.sh.holding(p.DropPlan) }
	opts.Handoff = func(ctx context.Context, goal string) (coordinator.Handoff, error) {
		return assemble.Handoff(ctx, p, c.coord, goal)
	}
	opts.Bash = func(ctx context.Context, command string) (string, bool) {
		res := p.PersonCommand(ctx, command)
		c.coord.AddNote(project.BashNote(command, res.Output))
		return res.Output, res.IsError
	}
	opts.Images = func(message string) string {
		message, shown := p.WithImages(message, c.coord.ModelName())
		c.coord.AttachImages(shown)
		return message
	}
}

// commands gives the slash commands what they need of the project and
// of the caller: shell lines, definitions, plugins, /resume's reopening
// and the live figures of ralph status.
func (c *chat) commands(h *slash.Host) {
	p, o := c.p, c.o
	h.Command, h.Definitions, h.Plugins = p.ShellLine, p.Definitions.Defs(), slash.PluginCommandDirs(p.Plugins)
	h.Plugin = o.Plugin
	if o.Reopen != nil && o.Coord == nil {
		h.Reopen = func(id string) {
			c.reopen = id
			o.Reopen(id)
		}
	}
	h.Live = func() report.Live {
		u := c.coord.Usage()
		return report.Live{SessionID: c.coord.SessionID(), LockHeld: p.Holding(), Model: c.coord.ModelName(),
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	}
}

// sayHowToComeBack writes the session's summary as the shell leaves.
// Leaving (Ctrl-C twice, Ctrl-D) keeps the conversation, and nothing
// else on the screen says so or how to come back to it. A task loop's
// shell (o.Coord) is the loop's to report on.
func (c *chat) sayHowToComeBack() {
	p, o := c.p, c.o
	if o.Coord == nil && c.reopen == "" && talked(c.coord.Messages()) {
		id := p.Session.CurrentID()
		latest, _ := memory.FindSession(p.Fs, p.Root, "")
		summary := view.ExitSummary(view.LoadSessionFacts(p.Fs, p.Root, id), latest == id)
		width, _ := live.Size(o.Term.Width, o.Term.Height)
		_, _ = io.WriteString(o.Term.Err, view.Lines(strings.Split(summary, "\n"), width))
	}
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
