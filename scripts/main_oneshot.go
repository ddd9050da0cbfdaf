package scripts

import (
	"context"
	"fmt"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/scripts/terminal"
)

// NewOneShot builds the one-shot face for an output format and the
// terminal; a bad format is reported (exit 2) before anything else
// happens, and the face is still usable to report it.
func NewOneShot(format string, t terminal.Facts) (*OneShot, int) {
	face := &OneShot{
		Format: format, Stdout: t.Out, Stderr: t.Err,
		StdoutTTY: t.OutTTY, StderrTTY: t.ErrTTY, Color: t.Color, Width: t.Width, Style: t.RenderStyle,
		facts: t,
	}
	if t.ErrTTY {
		// Questions are read from the terminal itself, so they can be
		// asked while standard input is a pipe.
		face.asks = newQuestions(t.Err, openTTY)
	}
	if err := ValidateFormat(format); err != nil {
		face.Format = FormatText
		return face, face.Fail(ExitUsage, err)
	}
	return face, ExitOK
}

// OneShotMain runs one task on an opened project and exits: `ralph
// "task"`, `ralph -c "follow-up"`, and `ralph resume` of a conversation
// (prompt "" with resume set: the model goes on where it stopped).
func OneShotMain(ctx context.Context, p *project.Project, face *OneShot, prompt string, resume bool) int {
	if resume && prompt == "" {
		if p.PriorStatus == memory.StatusCompleted {
			fmt.Fprintf(face.Stderr, "ralph: session %s already completed; to go on with it, give a follow-up: ralph -c \"...\"\n", p.Session.ID)
			_ = p.Session.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted })
			return ExitOK
		}
		prompt = resumePrompt(p.History)
	}
	queue := interrupts.NewQueue()
	stopSignals := interrupts.NotifySignals(ctx, queue)
	defer stopSignals()
	face.Model, face.Cwd, face.ConfiguredStyle = p.Config.Model, p.Root, p.Config.Style
	face.SetNotifier(NewNotifier(p.Root, p.Session.ID, p.Config.NotifyCommand, p.Config.APIKeyEnv, face.facts, face.Stderr))
	defer face.notifier.Close()
	face.Start()
	defer face.Close()
	coord := p.Coordinator(queue, face.Handle)
	// Another terminal steers the run as this one would: ralph stop is
	// the hard stop Ctrl-C queues, ralph say a message for the next step.
	questions := p.Serve(control.Steer{Queue: queue}, face.Notify)
	// Approvals are asked at the terminal when there is one (with --yes
	// only about leaving the sandbox), and through ralph answer.
	if a := p.Asker(questions, face.Asker()); a != nil {
		p.Approval.SetAsker(a)
		defer p.Approval.SetAsker(nil)
	}
	res := coord.Run(ctx, prompt)
	return face.Finish(res)
}

// resumePrompt is what to tell the model when a session continues without
// a new message: nothing when the conversation ends with tool results (the
// model goes on by itself), otherwise a short nudge.
func resumePrompt(history []conversation.Message) string {
	if n := len(history); n > 0 && history[n-1].Role == conversation.RoleTool {
		return ""
	}
	return "[ralph resumed this session after it stopped] Continue where you left off."
}
