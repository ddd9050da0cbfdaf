package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/project"
	"github.com/ralph-dev/ralph/scripts"
	"github.com/ralph-dev/ralph/workers"
)

// runFlags are `ralph run`'s own options.
type runFlags struct {
	maxIterations int
	onError       string
	retries       int
	maxCost       float64
	until         string
	breaker       string
	verify        string
	agent         string
	taskTimeout   time.Duration
	resume        bool
}

func addRunCommand(root *cobra.Command, f *flags) {
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Work through RALPH_TASKS.md on its own until done, a stop condition, or a limit",
		Long: `Work through the open tasks of RALPH_TASKS.md: pick the next ready task (priority,
then file order, dependencies done), mark it in progress, let a child agent (or an
external CLI agent, --agent) work it, and mark it done when the agent completes it
and --verify passes. Progress is saved at every task boundary; after a crash,
` + "`ralph resume`" + ` picks the loop up.

Conditions (--until, --breaker) are expressions over: iterations, tasks_open,
tasks_done, tasks_failed, errors, error_rate, tokens, cost_usd, elapsed_s,
no_progress, same_error_repeats. They are checked before any model call.

Exit codes: 0 every task done (or --until met) and none failed; 1 a task failed or
the loop stopped early; 2 usage; 3 locked; 130/143 interrupted.`,
		Example: `  ralph run -y
  ralph run -y --parallel 3 --verify 'go test ./...'
  ralph run -y --until 'tasks_done >= 5 || cost_usd > 2'
  ralph run --agent claude --on-error skip
  ralph run --agent "exec:./my-agent.sh" --task-timeout 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("max-retries") {
				f.maxRetries = -1
			}
			if code := runLoop(cmd.Context(), *f, rf); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&rf.maxIterations, "max-iterations", 100, "stop after this many task attempts")
	fl.StringVar(&rf.onError, "on-error", coordinator.OnErrorRetry, "after a failed attempt: retry, skip (mark failed) or abort")
	fl.IntVar(&rf.retries, "retries", 2, "with --on-error retry: attempts after the first before a task is marked failed")
	fl.Float64Var(&rf.maxCost, "max-cost", 0, "stop when the known cost in USD reaches this (0: no limit)")
	fl.StringVar(&rf.until, "until", "", "stop, successfully, once this condition holds, e.g. 'tasks_done >= 5'")
	fl.StringVar(&rf.breaker, "breaker", "", "circuit breaker condition (default 'no_progress >= 3 || same_error_repeats >= 3')")
	fl.StringVar(&rf.verify, "verify", "", "command that must pass before a task counts as done, e.g. 'go test ./...'")
	fl.StringVar(&rf.agent, "agent", "", "work tasks with an external CLI: claude, codex or exec:'<command>'")
	fl.DurationVar(&rf.taskTimeout, "task-timeout", 30*time.Minute, "time limit of one task attempt")
	root.AddCommand(cmd)
}

// runLoop wires `ralph run` (and `ralph resume` of a run session).
func runLoop(ctx context.Context, f flags, rf runFlags) int {
	face, fail := newFace(f)
	if fail != 0 {
		return fail
	}
	switch rf.onError {
	case coordinator.OnErrorRetry, coordinator.OnErrorSkip, coordinator.OnErrorAbort:
	default:
		return face.Fail(scripts.ExitUsage, fmt.Errorf("--on-error must be retry, skip or abort, not %q", rf.onError))
	}
	// Conditions and the agent spec are checked before anything else, so a
	// typo costs nothing.
	var until, breaker coordinator.Condition
	var err error
	if rf.until != "" {
		if until, err = scripts.CompileCondition("--until", rf.until); err != nil {
			return face.Fail(scripts.ExitUsage, err)
		}
	}
	if rf.breaker != "" {
		if breaker, err = scripts.CompileCondition("--breaker", rf.breaker); err != nil {
			return face.Fail(scripts.ExitUsage, err)
		}
	}
	var external *workers.ExternalAgent
	if rf.agent != "" {
		a, err := workers.ParseAgentSpec(rf.agent)
		if err != nil {
			return face.Fail(scripts.ExitUsage, err)
		}
		external = &a
	}
	root, err := projectDir(f.dir)
	if err != nil {
		return face.Fail(scripts.ExitUsage, err)
	}
	ov := overrides(f)
	p, err := project.Open(ctx, project.Options{
		Root: root, Mode: "run", Resume: rf.resume, SessionID: f.session, Force: f.force,
		Approver: approver(f.yes), Overrides: ov, ModelOptional: external != nil,
		Notify: func(s string) { fmt.Fprintln(os.Stderr, "ralph: "+s) },
	})
	if err != nil {
		return face.Fail(openExitCode(err), err)
	}
	defer p.Close()
	tasks, err := memory.LoadTasks(p.Fs, root)
	if err != nil {
		return face.Fail(scripts.ExitFailed, err)
	}
	if tasks.Counts().Total == 0 {
		return face.Fail(scripts.ExitUsage, fmt.Errorf("%s has no tasks; add lines like \"- [ ] do something\" (ralph init creates the file)", memory.TasksFile))
	}

	queue := interrupts.NewQueue()
	stopSignals := interrupts.NotifySignals(ctx, queue)
	defer stopSignals()
	face.Model, face.Cwd = p.Config.Model, root
	face.Start()
	defer face.Close()
	coord := p.Coordinator(queue, face.Handle)
	var worker coordinator.TaskWorker = coord.ChildTaskWorker()
	if external != nil {
		external.Root, external.Timeout = root, rf.taskTimeout
		worker = coordinator.ExternalTaskWorker{Agent: *external, Emit: face.Handle}
	}
	opts := coordinator.LoopOptions{
		Fs: p.Fs, Root: root, Worker: worker, MaxIterations: rf.maxIterations, Parallel: f.parallel,
		OnError: rf.onError, Retries: rf.retries, MaxCost: rf.maxCost, Until: until, Breaker: breaker,
		Queue: queue, Store: p.Session, Emit: face.Handle, SessionID: p.Session.ID, Prior: p.Prior(),
		Ask: askOnTerminal(),
	}
	if rf.verify != "" {
		opts.Verify = func(ctx context.Context) (bool, string) {
			r := p.Tools.RunShell(ctx, rf.verify, 10*time.Minute)
			return !r.IsError, r.Output
		}
	}
	start := time.Now()
	res := coordinator.RunTasks(ctx, opts)
	counts := memory.TaskCounts{}
	if f, err := memory.LoadTasks(p.Fs, root); err == nil {
		counts = f.Counts()
	}
	return face.FinishLoop(res, p.Session.ID, time.Since(start), p.Session.State().Usage, counts)
}

// askOnTerminal asks the person at the terminal whether to go on when the
// circuit breaker trips; without a terminal there is nobody to ask and the
// loop stops with an error.
func askOnTerminal() func(ctx context.Context, q string) bool {
	if !isTerminal(os.Stderr) {
		return nil
	}
	return func(ctx context.Context, q string) bool {
		tty, err := os.Open("/dev/tty")
		if err != nil {
			return false
		}
		defer tty.Close()
		fmt.Fprintf(os.Stderr, "\nralph: %s [y/N] ", q)
		answer := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(tty).ReadString('\n')
			answer <- strings.TrimSpace(strings.ToLower(line))
		}()
		select {
		case a := <-answer:
			return a == "y" || a == "yes"
		case <-ctx.Done():
			return false
		}
	}
}
