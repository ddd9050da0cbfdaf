package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/repl"
	"github.com/ralph-dev/ralph/scripts"
	"github.com/ralph-dev/ralph/scripts/commands"
	"github.com/ralph-dev/ralph/workers"
)

const chatLong = `Talk to ralph in an interactive shell. Answers stream as they arrive; while
ralph works you can keep typing:

  Ctrl-C, Esc, /stop   hard stop: cancel everything in flight, save, back to the prompt
  !message             urgent: cut the current model step, ralph reads it at once
  message              normal: delivered at the next step boundary, in order

At an idle prompt Ctrl-C clears the line; Ctrl-C twice or Ctrl-D leaves.
/help lists the slash commands (/status, /tasks, /agents, /model, /clear, ...).
run_command asks y/n/always; "always" is saved in .ralph/config.toml.

With standard input not a terminal (ralph chat < FILE) each line is run as if
typed: no prompt, no colour, # comments and blank lines skipped, slash commands
allowed, a trailing backslash continues a line; every line runs, and the exit
code is that of the first failed step (0 when all succeeded).`

const scriptLong = `Run a script of chat lines: one message or slash command per line, # comments
and blank lines skipped, a trailing backslash continues a line. ralph stops at
the first failed step (exit code non-zero) unless --keep-going. FILE - reads
standard input.

Output (--output-format):
  text         each answer and command output on stdout, errors on stderr
  json         one result object per step, one per line: the one-shot result
               object plus "step", "line" and "input"
  stream-json  one init line, every event of every step, and after each step
               its result object as in json

Exit codes: 0 every step succeeded; otherwise the code of the first failed
step: 1 it failed, 2 usage or configuration error; 3 another ralph holds the
project; 130/143 interrupted by SIGINT/SIGTERM.`

// addChatCommands wires `ralph chat` and `ralph script FILE`.
func addChatCommands(root *cobra.Command, f *flags) {
	prep := func(cmd *cobra.Command) {
		if !cmd.Flags().Changed("max-retries") {
			f.maxRetries = -1
		}
	}
	chat := &cobra.Command{
		Use:   "chat",
		Short: "Talk to ralph in an interactive shell (or run lines piped on standard input)",
		Long:  chatLong,
		Example: `  ralph chat
  ralph chat -c                       # continue the latest session
  ralph chat < steps.txt              # run each line as if typed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prep(cmd)
			if code := chatMain(cmd.Context(), *f, cmd); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	var keepGoing bool
	script := &cobra.Command{
		Use:   "script FILE",
		Short: "Run a file of chat lines, stopping at the first failed step",
		Long:  scriptLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prep(cmd)
			if code := scriptMain(cmd.Context(), *f, args[0], keepGoing); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	script.Flags().BoolVar(&keepGoing, "keep-going", false, "run every step even after one failed (the exit code still says it failed)")
	for _, c := range []*cobra.Command{chat, script} {
		c.Flags().BoolVarP(&f.cont, "continue", "c", false, "continue the latest session")
		c.Flags().StringVar(&f.session, "session", "", "continue the session with this id (or a unique part of it)")
	}
	root.AddCommand(chat, script)
}

// chatMain is `ralph chat`, and bare `ralph` on a terminal: the interactive
// shell when standard input and standard error are terminals, scripted
// mode over standard input otherwise.
func chatMain(ctx context.Context, f flags, _ *cobra.Command) int {
	if !isTerminal(os.Stdin) || !isTerminal(os.Stderr) {
		return runScript(ctx, f, os.Stdin, scriptOptions{keepGoing: true})
	}
	root, err := projectDir(f.dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		return scripts.ExitUsage
	}
	var notices []string
	appr := repl.NewApprover(f.yes)
	p, err := project.Open(ctx, project.Options{
		Root: root, Mode: "chat", Resume: f.cont || f.session != "", SessionID: f.session, Force: f.force,
		Approver: appr, Overrides: overrides(f),
		Notify: func(s string) { notices = append(notices, s) },
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		return openExitCode(err)
	}
	defer p.Close()
	appr.Configure(p.Fs, root, p.Config.AllowedCommands)
	queue := interrupts.NewQueue()
	banner := append(notices, fmt.Sprintf("ralph %s · %s · session %s · /help for help, Ctrl-D to leave", version, p.Config.Model, p.Session.ID))
	if p.Resumed {
		banner = append(banner, fmt.Sprintf("continuing the session: %d messages so far", len(p.History)))
	}
	var sh *repl.Shell
	var coord *coordinator.Coordinator
	ctl := coordinator.NewLoopControl()
	sh = repl.New(repl.Options{
		Pause: ctl.Pause, Resume: ctl.Resume,
		Fs: p.Fs, Root: root, SessionID: p.Session.ID, Queue: queue,
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Color: useColor(f), Banner: banner,
		HistoryFile: filepath.Join(root, ".ralph", "history"),
		Loop: func(ctx context.Context) (string, error) {
			return taskLoop(ctx, p, f, queue, coord, ctl, sh.Handle, sh.Confirm)
		},
	})
	appr.Attach(sh)
	coord = p.Coordinator(queue, sh.Handle)
	code := sh.Run(ctx, coord)
	closeChatSession(p)
	return code
}

type scriptOptions struct {
	keepGoing bool
	progress  bool
}

// scriptMain is `ralph script FILE`.
func scriptMain(ctx context.Context, f flags, path string, keepGoing bool) int {
	in := io.Reader(os.Stdin)
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ralph: cannot read the script: %v\n", err)
			return scripts.ExitUsage
		}
		defer file.Close()
		in = file
	}
	return runScript(ctx, f, in, scriptOptions{keepGoing: keepGoing, progress: isTerminal(os.Stderr)})
}

// runScript runs chat lines from in, one step at a time.
func runScript(ctx context.Context, f flags, in io.Reader, o scriptOptions) int {
	format := f.outputFormat
	if f.json {
		format = scripts.FormatJSON
	}
	face := &scripts.OneShot{Format: format, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := scripts.ValidateFormat(format); err != nil {
		face.Format = scripts.FormatText
		return face.Fail(scripts.ExitUsage, err)
	}
	root, err := projectDir(f.dir)
	if err != nil {
		return face.Fail(scripts.ExitUsage, err)
	}
	// Nobody can be asked in scripted mode: --yes approves everything,
	// otherwise only allowed_commands run (the project applies those).
	var appr workers.Approver = workers.DenyNoTerminal
	if f.yes {
		appr = workers.AllowAll
	}
	p, err := project.Open(ctx, project.Options{
		Root: root, Mode: "script", Resume: f.cont || f.session != "", SessionID: f.session, Force: f.force,
		Approver: appr, Overrides: overrides(f),
		Notify: func(s string) { fmt.Fprintln(os.Stderr, "ralph: "+s) },
	})
	if err != nil {
		return face.Fail(openExitCode(err), err)
	}
	defer p.Close()
	queue := interrupts.NewQueue()
	stopSignals := interrupts.NotifySignals(ctx, queue)
	defer stopSignals()
	sc := &scripts.Script{
		Format: format, Stdout: os.Stdout, Stderr: os.Stderr, StderrTTY: o.progress, Color: useColor(f),
		KeepGoing: o.keepGoing, Model: p.Config.Model, Cwd: root, SessionID: p.Session.ID, Queue: queue,
	}
	coord := p.Coordinator(queue, sc.Handle)
	var typed []string
	sc.Run = coord.Run
	sc.Host = &commands.Host{Fs: p.Fs, Root: root, Coord: coord, SessionID: p.Session.ID,
		History: func(n int) []string { return typed[max(0, len(typed)-n):] },
		Loop: func(ctx context.Context) (string, error) {
			return taskLoop(ctx, p, f, queue, coord, nil, sc.Handle, nil)
		}}
	steps := scripts.NewStepReader(in)
	code := sc.Steps(ctx, func() (scripts.Step, error) {
		st, err := steps.Next()
		if err == nil {
			typed = append(typed, st.Text)
		}
		return st, err
	})
	closeChatSession(p)
	return code
}

// taskLoop is /run: the task loop over RALPH_TASKS.md, as `ralph run`
// runs it, with children spawned by this conversation's coordinator and
// events shown by the face. ask answers the circuit breaker (nil: nobody
// to ask, the loop stops).
func taskLoop(ctx context.Context, p *project.Project, f flags, queue *interrupts.Queue, coord *coordinator.Coordinator,
	ctl *coordinator.LoopControl, emit func(coordinator.Event), ask func(context.Context, string) bool) (string, error) {
	st := p.Session.State()
	res := coordinator.RunTasks(ctx, coordinator.LoopOptions{
		Fs: p.Fs, Root: p.Root, Worker: coord.ChildTaskWorker(), Parallel: f.parallel,
		Queue: queue, Store: p.Session, Events: coord.Events(), SessionID: p.Session.ID, Prior: &st, Ask: ask, Control: ctl,
	})
	summary := fmt.Sprintf("task loop: %s (%d done, %d failed)", res.Reason, len(res.Done), len(res.Failed))
	if res.IsError {
		if res.Err != nil {
			return summary, res.Err
		}
		return summary, errors.New(summary)
	}
	return summary, nil
}

// closeChatSession leaves a truthful status: a chat that ended with no
// work in flight is not "running". Every finished run has saved its own
// status already; a session in which nothing ran goes back to what it
// was before this chat, or completed.
func closeChatSession(p *project.Project) {
	_ = p.Session.SaveState(func(st *memory.State) {
		if st.Status != memory.StatusRunning {
			return
		}
		st.Status = memory.StatusCompleted
		if p.Resumed && p.PriorStatus != "" && p.PriorStatus != memory.StatusRunning {
			st.Status = p.PriorStatus
		}
		st.EndedAt = time.Now().UTC()
	})
}

func useColor(f flags) bool {
	return !f.noColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}
