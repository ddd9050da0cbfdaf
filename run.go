package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/repl"
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
	// On a terminal, Ctrl-C switches into chat; the approver and the event
	// sink are switched with it, so both start as the one-shot ones.
	appr := &switchApprover{}
	appr.set(approver(f.yes))
	p, err := project.Open(ctx, project.Options{
		Root: root, Mode: "run", Resume: rf.resume, SessionID: f.session, Force: f.force,
		Approver: appr, Overrides: ov, ModelOptional: external != nil,
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
	coord := p.Coordinator(queue, nil)
	sink := &switchSink{events: coord.Events()}
	defer sink.stop()
	sink.set(face.Handle)
	var worker coordinator.TaskWorker = coord.ChildTaskWorker()
	if external != nil {
		external.Root, external.Timeout = root, rf.taskTimeout
		worker = coordinator.ExternalTaskWorker{Agent: *external, Events: coord.Events()}
	}
	opts := coordinator.LoopOptions{
		Fs: p.Fs, Root: root, Worker: worker, MaxIterations: rf.maxIterations, Parallel: f.parallel,
		OnError: rf.onError, Retries: rf.retries, MaxCost: rf.maxCost, Until: until, Breaker: breaker,
		Queue: queue, Store: p.Session, Events: coord.Events(), SessionID: p.Session.ID, Prior: p.Prior(),
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
	if res.Reason == coordinator.ReasonInterrupted && res.Signal == syscall.SIGINT && face.Format == scripts.FormatText &&
		isTerminal(os.Stdin) && isTerminal(os.Stderr) {
		// Stop and switch: the loop is stopped and saved; the person goes
		// on talking to the same coordinator, and /run resumes the loop.
		stopSignals()
		face.Close()
		fmt.Fprintf(os.Stderr, "ralph: stopped the task loop (%d done, %d failed) — state saved; this is chat now: /run resumes the loop, Ctrl-D leaves\n",
			len(res.Done), len(res.Failed))
		return switchToChat(ctx, p, f, queue, coord, sink, appr)
	}
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

// switchSink is the face subscribed to the coordinator's events; it
// changes when `ralph run` switches into chat.
type switchSink struct {
	events *pubsub.Broker[coordinator.Event]
	cancel func()
}

// set subscribes fn in place of the face before: the old subscription
// handles what was published to it and ends first, so no event is lost or
// shown twice, and the two faces never overlap.
func (s *switchSink) set(fn func(coordinator.Event)) {
	s.stop()
	s.cancel = s.events.Subscribe(context.Background(), fn)
}

// stop ends the current subscription.
func (s *switchSink) stop() {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
}

// switchApprover approves through whichever face owns the terminal now.
type switchApprover struct {
	mu sync.Mutex
	a  workers.Approver
}

func (s *switchApprover) set(a workers.Approver) {
	s.mu.Lock()
	s.a = a
	s.mu.Unlock()
}

func (s *switchApprover) ApproveCommand(ctx context.Context, cmd string) workers.Decision {
	s.mu.Lock()
	a := s.a
	s.mu.Unlock()
	return a.ApproveCommand(ctx, cmd)
}

// switchToChat opens the chat shell on the task loop's own project,
// coordinator and queue.
func switchToChat(ctx context.Context, p *project.Project, f flags, queue *interrupts.Queue, coord *coordinator.Coordinator,
	sink *switchSink, appr *switchApprover) int {
	chatAppr := repl.NewApprover(f.yes)
	chatAppr.Configure(p.Fs, p.Root, p.Config.AllowedCommands)
	var sh *repl.Shell
	ctl := coordinator.NewLoopControl()
	sh = repl.New(repl.Options{
		Pause: ctl.Pause, Resume: ctl.Resume,
		Fs: p.Fs, Root: p.Root, SessionID: p.Session.ID, Queue: queue,
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Color: useColor(f),
		HistoryFile: filepath.Join(p.Root, ".ralph", "history"),
		Loop: func(ctx context.Context) (string, error) {
			return taskLoop(ctx, p, f, queue, coord, ctl, sh.Handle, sh.Confirm)
		},
	})
	chatAppr.Attach(sh)
	appr.set(chatAppr)
	sink.set(sh.Handle)
	code := sh.Run(ctx, coord)
	closeChatSession(p)
	return code
}
