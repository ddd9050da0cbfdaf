package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/scripts"
	"github.com/ralph-dev/ralph/workers"
)

// oneShot wires `ralph "task"`, `ralph -c "follow-up"` and `ralph resume`:
// the project (config, lock, recovery, session), the one-shot face and one
// coordinator run.
func oneShot(ctx context.Context, f flags, task string, cmd *cobra.Command) int {
	face, fail := newFace(f)
	if fail != 0 {
		return fail
	}
	root, err := projectDir(f.dir)
	if err != nil {
		return face.Fail(scripts.ExitUsage, err)
	}
	stdin, piped, err := scripts.ReadPipedStdin(os.Stdin)
	if err != nil {
		return face.Fail(scripts.ExitUsage, err)
	}
	prompt := scripts.BuildPrompt(task, stdin)
	resume := f.resume || f.cont || f.session != ""
	if prompt == "" && !f.resume {
		if !piped && isTerminal(os.Stdin) && !resume {
			// Bare `ralph` on a terminal is the chat shell.
			return chatMain(ctx, f, cmd)
		}
		return face.Fail(scripts.ExitUsage, fmt.Errorf("no task given: pass it as an argument (ralph \"task\") or on standard input"))
	}

	p, err := project.Open(ctx, project.Options{
		Root: root, Mode: "oneshot", Resume: resume, SessionID: f.session, Force: f.force,
		Approver:  approver(f.yes),
		Overrides: overrides(f),
		Notify:    func(s string) { fmt.Fprintln(os.Stderr, "ralph: "+s) },
	})
	if err != nil {
		return face.Fail(openExitCode(err), err)
	}
	defer p.Close()
	if f.resume && prompt == "" {
		if p.PriorStatus == memory.StatusCompleted {
			fmt.Fprintf(os.Stderr, "ralph: session %s already completed; to go on with it, give a follow-up: ralph -c \"...\"\n", p.Session.ID)
			_ = p.Session.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted })
			return 0
		}
		prompt = resumePrompt(p.History)
	}

	queue := interrupts.NewQueue()
	stopSignals := interrupts.NotifySignals(ctx, queue)
	defer stopSignals()
	face.Model, face.Cwd = p.Config.Model, root
	face.Start()
	defer face.Close()
	res := p.Coordinator(queue, face.Handle).Run(ctx, prompt)
	return face.Finish(res)
}

// newFace builds the one-shot face for the output flags; a bad format is
// reported (exit 2) before anything else happens.
func newFace(f flags) (*scripts.OneShot, int) {
	format := f.outputFormat
	if f.json {
		format = scripts.FormatJSON
	}
	color := !f.noColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	face := &scripts.OneShot{
		Format: format, Stdout: os.Stdout, Stderr: os.Stderr,
		StdoutTTY: isTerminal(os.Stdout), StderrTTY: isTerminal(os.Stderr),
		Color: color, Width: terminalWidth(os.Stdout),
	}
	if err := scripts.ValidateFormat(format); err != nil {
		face.Format = scripts.FormatText
		return face, face.Fail(scripts.ExitUsage, err)
	}
	return face, 0
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

// openExitCode maps errors from opening a project to exit codes.
func openExitCode(err error) int {
	switch {
	case errors.Is(err, config.ErrInvalid), errors.Is(err, memory.ErrNoSession), errors.Is(err, memory.ErrNewerState):
		return scripts.ExitUsage
	case errors.Is(err, memory.ErrLocked):
		return scripts.ExitLocked
	}
	return scripts.ExitFailed
}

func overrides(f flags) project.Overrides {
	return project.Overrides{Model: f.model, BaseURL: f.baseURL, MaxTurns: f.maxTurns, MaxRetries: f.maxRetries,
		CommandTimeout: time.Duration(f.commandTimeout) * time.Second, Parallel: f.parallel}
}

// approver picks how run_command is approved: --yes approves all; with a
// terminal the user is asked on it; otherwise commands are refused with a
// result telling the model (and the user) how to allow them.
func approver(yes bool) workers.Approver {
	if yes {
		return workers.AllowAll
	}
	if isTerminal(os.Stderr) {
		if tty, err := os.Open("/dev/tty"); err == nil {
			return &workers.PromptApprover{In: tty, Out: os.Stderr}
		}
	}
	return workers.DenyNoTerminal
}
