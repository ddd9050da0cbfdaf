package scripts

import (
	"context"
	"errors"
	"fmt"
	"github.com/ralph-dev/ralph/workers/agents"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/review"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/scripts/terminal"
	"github.com/spf13/afero"
	"github.com/spf13/cobra"
)

// addLoopCommands wires `ralph run` and `ralph resume`, which share the
// task loop's flags: resume restores a loop's saved configuration and the
// flags given to it override that.
func (c *cli) addLoopCommands(root *cobra.Command) {
	f := &c.f
	runCmd := &cobra.Command{
		Use:     "run [PLAN]",
		Short:   "Work through RALPH_TASKS.md (or PLAN) on its own until done, a stop condition, or a limit",
		Long:    RunHelp,
		Example: runExamples,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = reviewValue(cmd, args, &f.run.Review)
			if len(args) == 1 {
				f.planArg = args[0]
			}
			return exit(c.loop(cmd, project.ModeRun, false))
		},
	}
	resume := &cobra.Command{
		Use:   "resume [session-id]",
		Short: "Continue an interrupted session (the latest by default)",
		Long: `Continue a session from its last saved step: after a Ctrl-C, a crash or a kill.
A task loop goes on with the configuration it was started with (--agent,
--verify, --parallel, --until, ...); flags given here override it and are
saved. Tool calls that were running when ralph stopped are reported to the
model as "unknown outcome", so it checks before repeating them; nothing
already done is done again. A session id may be given in full or as a
unique part.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = reviewValue(cmd, args, &f.run.Review)
			if len(args) == 1 {
				f.session = args[0]
			}
			return exit(c.loop(cmd, "", true))
		},
	}
	d := loop.DefaultRun()
	for _, cmd := range []*cobra.Command{runCmd, resume} {
		fl := cmd.Flags()
		fl.IntVar(&f.run.MaxIterations, "max-iterations", d.MaxIterations, "stop after this many task attempts")
		fl.StringVar(&f.run.OnError, "on-error", d.OnError, "after a failed attempt: retry, skip (mark failed) or abort")
		fl.IntVar(&f.run.Retries, "retries", d.Retries, "with --on-error retry: attempts after the first before a task is marked failed")
		fl.Float64Var(&f.run.MaxCost, "max-cost", 0, "stop when the known cost in USD reaches this (0: no limit)")
		fl.StringVar(&f.run.Until, "until", "", "stop, successfully, once this condition holds, e.g. 'tasks_done >= 5'")
		fl.StringVar(&f.run.Breaker, "breaker", "", "circuit breaker condition (default 'no_progress >= 3 || same_error_repeats >= 3')")
		fl.StringVar(&f.run.Verify, "verify", "", "command that must pass before a task counts as done, e.g. 'go test ./...'")
		fl.StringVar(&f.run.Agent, "agent", "", "work tasks with an external CLI: "+agents.Choices())
		fl.StringArrayVar(&f.run.AgentArgs, "agent-arg", nil, "an argument for the agent's command line, after ralph's own (repeat it for more: --agent-arg=--model --agent-arg=opus)")
		fl.DurationVar(&f.taskTimeout, "task-timeout", time.Duration(d.TaskTimeout), "time limit of one task attempt")
		fl.DurationVar(&f.breakerCool, "breaker-cooldown", time.Duration(d.BreakerCooldown),
			"with nobody to ask, how long the tripped circuit breaker waits before it lets one task through (doubles after each failed one)")
		fl.DurationVar(&f.maxWait, "max-wait", config.DefaultMaxWait,
			"longest wait for a rate or usage limit to reset before a task fails instead (config max_wait; 0: never wait)")
		fl.BoolVar(&f.run.Commit, "commit", false, "one git commit per done task, holding only that task's files")
		fl.BoolVar(&f.run.Worktrees, "worktrees", false, "work each task in a git worktree of its own on a branch ralph/<task-id>, merged back when done (implies --commit)")
		fl.StringVar(&f.run.Review, "review", "", "reviewer agents read the work before it counts: task (after each task passes verify; bare --review) or end (once, after the last); confirmed findings are fixed (config review)")
		// People type --review bare; it means the review of each task.
		fl.Lookup("review").NoOptDefVal = project.ReviewTask
		fl.IntVar(&f.run.ReviewRounds, "review-rounds", 3, "with --review: most review-and-fix rounds")
		fl.StringVar(&f.run.Reviewer, "reviewer", "", "with --review: run the reviewers as another agent ("+agents.Choices()+"), read-only")
		fl.BoolVar(&f.run.ArchiveDone, "archive-done", false, "when the plan's last task is done, move the plan file to plans_dir/completed (as ralphex does)")
		fl.StringVar(&f.run.PromptTemplate, "prompt-template", "",
			"Go text/template FILE the task prompts are made from (config prompt_template; fields: "+taskprompt.Fields+")")
	}
	rf := runCmd.Flags()
	rf.StringVar(&f.engine.Name, "engine", "", "where the task loop runs: local (the default) or temporal (config [engine] name)")
	rf.StringVar(&f.engine.Address, "address", "", "with --engine temporal: the Temporal frontend, HOST:PORT")
	rf.StringVar(&f.engine.Namespace, "namespace", "", "with --engine temporal: the Temporal namespace (default \"default\")")
	rf.StringVar(&f.engine.TaskQueue, "task-queue", "", "with --engine temporal: the task queue the workers poll (default \"ralph\")")
	root.AddCommand(runCmd, resume)
}

const runExamples = `  ralph run -y
  ralph run -y --parallel 3 --verify 'go test ./...'
  ralph run -y --until 'tasks_done >= 5 || cost_usd > 2'
  ralph run --agent claude --on-error skip
  ralph run --agent codex --agent-arg=--model --agent-arg=gpt-5-codex
  ralph run --agent "exec:./my-agent.sh" --task-timeout 10m
  ralph run --agent claude --max-wait 5h --breaker-cooldown 10m
  ralph run -y --commit
  ralph run -y --parallel 3 --worktrees
  ralph run -y --prompt-template .ralph/prompt.tmpl`

// loop opens the project for a task loop (`ralph run`) or a resume, whose
// session decides the face: a task loop goes on as one, anything else
// continues its conversation once.
func (c *cli) loop(cmd *cobra.Command, mode string, resume bool) int {
	ctx := cmd.Context()
	face, code := NewOneShot(c.format(), c.term)
	if code != 0 {
		return code
	}
	c.f.maxWaitSet = cmd.Flags().Changed("max-wait")
	if c.f.maxWait < 0 {
		return face.Fail(ExitUsage, fmt.Errorf("--max-wait cannot be negative (got %s); 0 means never wait", c.f.maxWait))
	}
	settle := func(saved *memory.RunConfig) (*memory.RunConfig, error) {
		rc := c.f.run
		rc.TaskTimeout = memory.Duration(c.f.taskTimeout)
		rc.BreakerCooldown = memory.Duration(c.f.breakerCool)
		rc.Parallel = c.f.parallel
		if rc.PromptTemplate != "" {
			// Saved for resume, which may run from another directory.
			abs, err := filepath.Abs(rc.PromptTemplate)
			if err != nil {
				return nil, fmt.Errorf("--prompt-template %s: %w", rc.PromptTemplate, err)
			}
			rc.PromptTemplate = abs
		}
		if saved != nil {
			rc = overrideRun(*saved, rc, cmd.Flags().Changed)
		}
		// A worktree's work reaches the branch only as a commit.
		rc.Commit = rc.Commit || rc.Worktrees
		return &rc, loop.CheckRun(&rc)
	}
	if c.f.planArg != "" {
		plan, id, err := c.planToRun(c.f.planArg)
		if err != nil {
			return face.Fail(project.ExitCode(err), err)
		}
		c.f.run.Plan = plan
		if id != "" && !resume {
			// The plan's own session stopped before its end: it goes on
			// where it stood, with its configuration.
			resume, c.f.session = true, id
			fmt.Fprintf(face.Stderr, "ralph: %s goes on in its session %s\n", plan, id)
		}
	}
	if mode == project.ModeRun && !resume {
		if code, ok := c.runElsewhere(ctx, face, settle); ok {
			return code
		}
	}
	p, err := c.open(ctx, mode, resume, nil, settle)
	if err != nil {
		return face.Fail(project.ExitCode(err), err)
	}
	defer p.Close()
	if p.Mode != project.ModeRun {
		return OneShotMain(ctx, p, face, "", true)
	}
	code, handoff := RunMain(ctx, p, face, c.term)
	if handoff != nil {
		return c.shell.Main(ctx, p, ChatOptions{Term: c.term, Version: c.version, Handoff: handoff})
	}
	return code
}

// overrideRun is a saved run configuration with the flags given on this
// command line put over it.
func overrideRun(saved, flags memory.RunConfig, changed func(string) bool) memory.RunConfig {
	rc := saved
	set := func(name string, apply func()) {
		if changed(name) {
			apply()
		}
	}
	set("max-iterations", func() { rc.MaxIterations = flags.MaxIterations })
	set("on-error", func() { rc.OnError = flags.OnError })
	set("retries", func() { rc.Retries = flags.Retries })
	set("max-cost", func() { rc.MaxCost = flags.MaxCost })
	set("until", func() { rc.Until = flags.Until })
	set("breaker", func() { rc.Breaker = flags.Breaker })
	set("verify", func() { rc.Verify = flags.Verify })
	set("agent", func() { rc.Agent = flags.Agent })
	set("agent-arg", func() { rc.AgentArgs = flags.AgentArgs })
	set("task-timeout", func() { rc.TaskTimeout = flags.TaskTimeout })
	set("breaker-cooldown", func() { rc.BreakerCooldown = flags.BreakerCooldown })
	set("parallel", func() { rc.Parallel = flags.Parallel })
	set("commit", func() { rc.Commit = flags.Commit })
	set("worktrees", func() { rc.Worktrees = flags.Worktrees })
	set("prompt-template", func() { rc.PromptTemplate = flags.PromptTemplate })
	set("archive-done", func() { rc.ArchiveDone = flags.ArchiveDone })
	set("review", func() { rc.Review = flags.Review })
	set("review-rounds", func() { rc.ReviewRounds = flags.ReviewRounds })
	set("reviewer", func() { rc.Reviewer = flags.Reviewer })
	return rc
}

// planToRun resolves ralph run's PLAN to its path relative to the
// project root, and finds the plan's session that stopped before its end,
// if any.
func (c *cli) planToRun(arg string) (plan, session string, err error) {
	r, err := c.records()
	if err != nil {
		return "", "", err
	}
	if plan, err = c.planName(r, arg); err != nil {
		return "", "", err
	}
	if _, err := memory.OpenTracker(r.Fs, r.Root, plan); err != nil {
		return "", "", err
	}
	session = memory.SessionToResume(r.Fs, r.Root, plan)
	if plan == memory.TasksFile {
		plan = "" // the default plan, as a run without PLAN names it
	}
	return plan, session, nil
}

// planName is a plan file named on the command line (relative to the
// directory ralph runs in, as -C gives it) as the project names it:
// relative to its root. A plan outside the project is refused.
func (c *cli) planName(r Records, arg string) (string, error) {
	abs := arg
	if !filepath.IsAbs(abs) {
		base := c.f.dir
		if base == "" {
			base = "."
		}
		abs = filepath.Join(base, arg)
	}
	abs, err := filepath.Abs(abs)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(r.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &memory.PlanError{Msg: fmt.Sprintf("the plan %s is outside the project %s", arg, r.Root)}
	}
	return filepath.ToSlash(rel), nil
}

// runElsewhere runs the task loop on another engine when --engine or the
// config's [engine] says so; ok is false for the local loop.
func (c *cli) runElsewhere(ctx context.Context, face *OneShot, settle func(*memory.RunConfig) (*memory.RunConfig, error)) (code int, ok bool) {
	root, err := project.Root(c.f.dir)
	if err != nil {
		return face.Fail(ExitUsage, err), true
	}
	cfg, err := config.Load(config.Sources{Fs: afero.NewOsFs(), ProjectRoot: root, UserConfigDir: config.UserConfigDir(), Getenv: os.Getenv})
	if err != nil {
		return face.Fail(ExitUsage, err), true
	}
	e := cfg.Engine
	fe := c.f.engine
	for _, kv := range [][2]*string{{&e.Name, &fe.Name}, {&e.Address, &fe.Address}, {&e.Namespace, &fe.Namespace}, {&e.TaskQueue, &fe.TaskQueue}} {
		if *kv[1] != "" {
			*kv[0] = *kv[1]
		}
	}
	switch e.Name {
	case "", "local":
		return 0, false
	case EngineTemporal:
	default:
		return face.Fail(ExitUsage, fmt.Errorf("--engine must be local or temporal, not %q", e.Name)), true
	}
	rc, err := settle(nil)
	if err != nil {
		return face.Fail(ExitUsage, err), true
	}
	if rc.Plan != "" || rc.Review != "" {
		// The workflow works the branch's RALPH_TASKS.md and knows no
		// reviewers: say so rather than run something else.
		return face.Fail(ExitUsage, errors.New("--engine temporal works RALPH_TASKS.md without --review; run other plans and reviews with the local engine")), true
	}
	maxWait := cfg.MaxWait
	if c.f.maxWaitSet {
		maxWait = c.f.maxWait
	}
	return RunTemporal(ctx, face, TemporalRun{Root: root, Engine: e, Run: *rc, MaxWait: maxWait}), true
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
	// A failure before the loop starts ends the session, which would
	// otherwise say it runs.
	fail := func(code int, err error) int {
		p.EndUnstarted(err)
		return face.Fail(code, err)
	}
	rc := p.Session.State().Run
	if rc == nil {
		d := loop.DefaultRun()
		rc = &d
	}
	checked, err := loop.Compile(rc)
	if err != nil {
		return fail(ExitUsage, err), nil
	}
	// Messages from another terminal reach ralph's own agents, not a CLI
	// agent's.
	external := checked.External != nil
	// Checked before the session was recorded too (project.Open); a
	// resumed session's plan may have changed since.
	tr, err := p.Tracker(rc)
	if err == nil {
		err = memory.CheckRunnable(tr)
	}
	if err != nil {
		return fail(project.ExitCode(err), err), nil
	}
	face.Model, face.Cwd, face.ConfiguredStyle = p.Config.Model, p.Root, p.Config.Style
	face.SetNotifier(NewNotifier(p.Root, p.Session.ID, p.Config.NotifyCommand, p.Config.APIKeyEnv, t, face.Stderr))
	face.Start()
	defer face.Close()
	// Another terminal steers the loop: ralph stop is the hard stop Ctrl-C
	// queues, ralph pause and continue act on the loop, and ralph say
	// reaches the agents working tasks at their next step boundary.
	// Approvals are asked at the terminal when there is one and through
	// ralph answer; the loop's own questions (the budget, the breaker)
	// only where there is a terminal: without one, its limits stop it.
	ctl := loop.NewControl()
	queue := interrupts.NewQueue()
	at := p.Attach(ctx, project.Face{Handle: face.Handle, Notify: face.Notify, Asker: face.Asker(), Queue: queue, Signals: true,
		Steer: func(coord *coordinator.Coordinator) control.Target {
			tell := func(it interrupts.Interrupt) int {
				if external {
					return -1
				}
				return coord.TellWorkers(it)
			}
			return control.Steer{Queue: queue, Tell: tell, Loop: ctl}
		}})
	defer at.Detach()
	coord, questions := at.Coord, at.Questions
	ask := face.Confirmer()
	if ask != nil && questions != nil {
		ask = questions.Confirmer(ask)
	}
	opts, _, err := p.LoopOptions(rc, project.LoopFace{Coord: coord, Queue: queue, Control: ctl, Ask: ask, Notify: face.Notify})
	if err != nil {
		return fail(ExitUsage, err), nil
	}
	start, prior := time.Now(), p.Session.State()
	res := loop.Run(ctx, opts)
	if res.Reason == loop.ReasonInterrupted && res.Signal == syscall.SIGINT && face.Format == FormatText &&
		t.InTTY && t.ErrTTY {
		// Stop and switch: the loop is stopped and saved; the person goes
		// on talking to the same coordinator, and /run resumes the loop.
		at.StopSignals()
		face.Close()
		fmt.Fprintf(face.Stderr, "ralph: stopped the task loop (%d done, %d failed) — state saved; this is chat now: /run resumes the loop, Ctrl-D leaves\n",
			len(res.Done), len(res.Failed))
		return 0, &Handoff{Queue: queue, Coord: coord}
	}
	counts := memory.TaskCounts{}
	if f, err := tr.Load(); err == nil {
		counts = f.Counts()
	}
	if rc.Review == project.ReviewEnd && !res.IsError && res.Reason != loop.ReasonInterrupted {
		// One review of the run's whole work, after its last task; its
		// findings and fixes are recorded, and major ones left make the
		// run's exit 1.
		rep, err := p.RunReview(ctx, rc, coord, face.Notify)
		switch {
		case errors.Is(err, review.ErrNothingToReview):
		case err != nil:
			fmt.Fprintf(face.Stderr, "ralph: the review after the run failed: %v\n", err)
			res.IsError = true
		case !rep.Clean:
			fmt.Fprintf(face.Stderr, "ralph: the review after the run left confirmed major findings after %d round(s); see ralph report\n", rep.Rounds)
			res.IsError = true
		default:
			fmt.Fprintf(face.Stderr, "ralph: the review after the run is clean (%d round(s), %d finding(s))\n", rep.Rounds, len(rep.Findings))
		}
	}
	if rc.ArchiveDone && counts.Total > 0 && counts.Done+counts.Skipped == counts.Total {
		// A finished plan leaves the plans in progress, as ralphex's do.
		if dest, err := memory.ArchivePlan(p.Fs, p.Root, rc.Plan, memory.PlansDir(p.Fs, p.Root, p.Config.PlansDir)); err != nil {
			fmt.Fprintf(face.Stderr, "ralph: %v\n", err)
		} else if dest != "" {
			fmt.Fprintf(face.Stderr, "ralph: every task of %s is done; moved it to %s\n", rc.Plan, dest)
		}
	}
	return face.FinishLoop(res, p.Session.ID, time.Since(start), p.Session.State().Usage, prior, counts), nil
}

// reviewValue takes a mode written after a bare --review ("--review end",
// which the flag's optional value leaves as an argument) as the flag's
// value, so both spellings keep meaning what they say. It returns the
// arguments left.
func reviewValue(cmd *cobra.Command, args []string, review *string) []string {
	fl := cmd.Flags().Lookup("review")
	if fl == nil || !fl.Changed || *review != project.ReviewTask || len(args) == 0 {
		return args
	}
	if args[0] == project.ReviewTask || args[0] == project.ReviewEnd {
		*review = args[0]
		return args[1:]
	}
	return args
}
