package scripts

import (
	"context"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/terminal"
	"github.com/ralph-dev/ralph/workers"
)

// DefaultRun is the configuration of `ralph run` before any flag.
func DefaultRun() memory.RunConfig {
	return memory.RunConfig{
		MaxIterations: 100, OnError: coordinator.OnErrorRetry, Retries: 2,
		TaskTimeout:     memory.Duration(coordinator.DefaultChildTimeout),
		BreakerCooldown: memory.Duration(coordinator.DefaultBreakerCooldown),
	}
}

// loopSetup is a run configuration compiled for the task loop.
type loopSetup struct {
	until, breaker coordinator.Condition
	external       *workers.ExternalAgent
}

// CheckRun reports a run configuration that cannot work, in one sentence:
// a negative or zero limit, an unknown --on-error, a condition that does
// not compile, an agent that is unknown or cannot start. It is checked
// before any work starts, so a typo costs nothing. (An exec: agent given
// by a relative path is checked against the project root when the project
// is opened, see project.Open.)
func CheckRun(rc *memory.RunConfig) error {
	_, err := compileRun(rc)
	return err
}

func compileRun(rc *memory.RunConfig) (loopSetup, error) {
	var s loopSetup
	switch {
	case rc.Parallel < 0:
		return s, fmt.Errorf("--parallel cannot be negative (got %d); it is how many tasks are worked at once", rc.Parallel)
	case rc.TaskTimeout <= 0:
		return s, fmt.Errorf("--task-timeout must be positive, not %s", time.Duration(rc.TaskTimeout))
	case rc.MaxCost < 0 || math.IsNaN(rc.MaxCost):
		return s, fmt.Errorf("--max-cost cannot be negative (got %v); 0 means no limit", rc.MaxCost)
	case rc.MaxIterations <= 0:
		return s, fmt.Errorf("--max-iterations must be at least 1, not %d", rc.MaxIterations)
	case rc.Retries < 0:
		return s, fmt.Errorf("--retries cannot be negative (got %d)", rc.Retries)
	case rc.BreakerCooldown < 0:
		return s, fmt.Errorf("--breaker-cooldown cannot be negative (got %s)", time.Duration(rc.BreakerCooldown))
	}
	switch rc.OnError {
	case coordinator.OnErrorRetry, coordinator.OnErrorSkip, coordinator.OnErrorAbort:
	default:
		return s, fmt.Errorf("--on-error must be retry, skip or abort, not %q", rc.OnError)
	}
	var err error
	if rc.Until != "" {
		if s.until, err = CompileCondition("--until", rc.Until); err != nil {
			return s, err
		}
	}
	if rc.Breaker != "" {
		if s.breaker, err = CompileCondition("--breaker", rc.Breaker); err != nil {
			return s, err
		}
	}
	if rc.Agent != "" {
		a, err := workers.ParseAgentSpec(rc.Agent)
		if err != nil {
			return s, err
		}
		if err := a.Check(""); err != nil {
			return s, err
		}
		s.external = &a
	} else if len(rc.AgentArgs) > 0 {
		return s, fmt.Errorf("--agent-arg goes with --agent claude, codex or exec:'<command>'")
	}
	return s, nil
}

// Handoff is a task loop stopped by Ctrl-C on a terminal: the person goes
// on talking to the same coordinator in the chat shell, and /run resumes
// the loop.
type Handoff struct {
	Queue *interrupts.Queue
	Coord *coordinator.Coordinator
}

// RunMain works through RALPH_TASKS.md on an opened project whose session
// is a task loop: `ralph run`, and `ralph resume` of a run, with the
// configuration saved in the session. A non-nil Handoff asks the caller to
// open the chat shell on it; the exit code is then meaningless.
func RunMain(ctx context.Context, p *project.Project, face *OneShot, t terminal.Facts) (int, *Handoff) {
	rc := p.Session.State().Run
	if rc == nil {
		d := DefaultRun()
		rc = &d
	}
	setup, err := compileRun(rc)
	if err != nil {
		return face.Fail(ExitUsage, err), nil
	}
	tasks, err := memory.LoadTasks(p.Fs, p.Root)
	if err != nil {
		return face.Fail(ExitFailed, err), nil
	}
	if tasks.Counts().Total == 0 {
		return face.Fail(ExitUsage, fmt.Errorf("%s has no tasks; add lines like \"- [ ] do something\" (ralph init creates the file)", memory.TasksFile)), nil
	}
	queue := interrupts.NewQueue()
	stopSignals := interrupts.NotifySignals(ctx, queue)
	defer stopSignals()
	face.Model, face.Cwd, face.ConfiguredStyle = p.Config.Model, p.Root, p.Config.Style
	face.SetNotifier(NewNotifier(p.Root, p.Session.ID, p.Config.NotifyCommand, p.Config.APIKeyEnv, t, face.Stderr))
	face.Start()
	defer face.Close()
	coord := p.Coordinator(queue, face.Handle)
	var worker coordinator.TaskWorker = coord.ChildTaskWorker()
	if setup.external != nil {
		// Processes an agent starts outside its group (claude's own
		// sessions, setsid) are reparented to ralph rather than init, so
		// they are found, stopped and reaped with the agent.
		if err := workers.BecomeSubreaper(); err != nil {
			fmt.Fprintln(face.Stderr, "ralph: "+err.Error())
		}
		agent, price, notices, err := p.ExternalAgent(rc)
		if err != nil {
			return face.Fail(ExitUsage, err), nil
		}
		for _, n := range notices {
			face.Notify(n)
		}
		worker = coordinator.ExternalTaskWorker{Agent: agent, Events: coord.Events(), Price: price}
	}
	// Another terminal steers the loop: ralph stop is the hard stop Ctrl-C
	// queues, ralph pause and continue act on the loop, and ralph say
	// reaches the agents working tasks at their next step boundary.
	ctl := coordinator.NewLoopControl()
	tell := func(it interrupts.Interrupt) int {
		if setup.external != nil {
			return -1
		}
		return coord.TellWorkers(it)
	}
	questions := p.Serve(control.Steer{Queue: queue, Tell: tell, Loop: ctl}, face.Notify)
	// Approvals are asked at the terminal when there is one and through
	// ralph answer; the loop's own questions (the budget, the breaker)
	// only where there is a terminal: without one, its limits stop it.
	if a := p.Asker(questions, face.Asker()); a != nil {
		p.Approval.SetAsker(a)
		defer p.Approval.SetAsker(nil)
	}
	ask := face.Confirmer()
	if ask != nil && questions != nil {
		ask = questions.Confirmer(ask)
	}
	opts := coordinator.LoopOptions{
		Fs: p.Fs, Root: p.Root, Worker: worker, MaxIterations: rc.MaxIterations, Parallel: rc.Parallel,
		OnError: rc.OnError, Retries: rc.Retries, MaxCost: rc.MaxCost, Until: setup.until, Breaker: setup.breaker,
		Queue: queue, Store: ctl.Watch(p.Session), Events: coord.Events(), RecordErr: p.RecordErr, SessionID: p.Session.ID, Prior: p.Prior(),
		Control:  ctl,
		Ask:      ask,
		Notify:   face.Notify,
		Redactor: p.Redactor,
		Git:      p.TaskGit(rc),
		// --prompt-template or prompt_template, read when the project
		// was opened (nil: ralph's own prompt).
		Prompt: p.PromptTemplate(),
		// Limits are waited for up to max_wait (--max-wait); the breaker's
		// cooldown applies only where nobody can be asked (Ask nil).
		MaxWait:         p.Config.MaxWait,
		BreakerCooldown: time.Duration(rc.BreakerCooldown),
	}
	if rc.Verify != "" {
		opts.Verify = func(ctx context.Context, ws coordinator.Workspace) (bool, string) {
			tools := p.Tools
			if ws.Tools != nil {
				tools = ws.Tools // the task's own worktree
			}
			r := tools.RunShell(ctx, rc.Verify, 10*time.Minute)
			return !r.IsError, r.Output
		}
	}
	start := time.Now()
	res := coordinator.RunTasks(ctx, opts)
	if res.Reason == coordinator.ReasonInterrupted && res.Signal == syscall.SIGINT && face.Format == FormatText &&
		t.InTTY && t.ErrTTY {
		// Stop and switch: the loop is stopped and saved; the person goes
		// on talking to the same coordinator, and /run resumes the loop.
		stopSignals()
		face.Close()
		fmt.Fprintf(face.Stderr, "ralph: stopped the task loop (%d done, %d failed) — state saved; this is chat now: /run resumes the loop, Ctrl-D leaves\n",
			len(res.Done), len(res.Failed))
		return 0, &Handoff{Queue: queue, Coord: coord}
	}
	counts := memory.TaskCounts{}
	if f, err := memory.LoadTasks(p.Fs, p.Root); err == nil {
		counts = f.Counts()
	}
	return face.FinishLoop(res, p.Session.ID, time.Since(start), p.Session.State().Usage, counts), nil
}
