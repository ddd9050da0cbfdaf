package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/scripts/notify"
	"github.com/ralph-dev/ralph/scripts/temporal"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/assemble"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
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
		Long:    RunHelp(),
		Example: runExamples,
		Args:    loopArgs(&f.run.Review),
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
		Args: loopArgs(&f.run.Review),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = reviewValue(cmd, args, &f.run.Review)
			if len(args) == 1 {
				f.session = args[0]
			}
			return exit(c.loop(cmd, "", true))
		},
	}
	for _, cmd := range []*cobra.Command{runCmd, resume} {
		fl := cmd.Flags()
		runFlags().register(fl, &f.run)
		fl.DurationVar(&f.maxWait, "max-wait", config.DefaultMaxWait,
			"longest wait for a rate or usage limit to reset before a task fails instead (config max_wait; 0: never wait)")
	}
	engineFlags().register(runCmd.Flags(), &f.engine)
	f.tracker.register(runCmd.Flags())
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
  ralph run -y --prompt-template .ralph/prompt.tmpl
  ralph run -y --tracker beads --epic bd-a3f8 --commit`

// loop opens the project for a task loop (`ralph run`) or a resume, whose
// session decides the face: a task loop goes on as one, anything else
// continues its conversation once.
func (c *cli) loop(cmd *cobra.Command, mode string, resume bool) int {
	ctx := cmd.Context()
	loopCollector()
	face, code := c.oneShotFace(c.format())
	if code != 0 {
		return code
	}
	c.f.maxWaitSet = cmd.Flags().Changed("max-wait")
	if c.f.maxWait < 0 {
		return face.Fail(ExitUsage, fmt.Errorf("--max-wait cannot be negative (got %s); 0 means never wait", c.f.maxWait))
	}
	settle := func(saved *memory.RunConfig) (*memory.RunConfig, error) {
		rc := c.f.run
		rc.Parallel = c.f.parallel
		return settleRun(saved, rc, cmd.Flags().Changed)
	}
	if mode == project.ModeRun && !resume {
		root, err := c.root()
		if err != nil {
			return face.Fail(project.ExitCode(err), err)
		}
		plan, err := c.f.tracker.plan(root, c.f.planArg, cmd.Flags().Changed)
		if err != nil {
			return face.Fail(ExitUsage, err)
		}
		c.f.planArg = plan
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
		if code, ok := c.runElsewhere(ctx, face, settle, cmd.Flags().Changed); ok {
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
		return c.shell.Main(ctx, p, ChatOptions{Term: c.term, Version: c.version, Handoff: handoff,
			RunArgs: func(args string) error { return runArgs(p, args) }, Plugin: PluginLine(p.Root)})
	}
	return code
}

// planToRun resolves ralph run's PLAN to its path relative to the
// project root, and finds the plan's session that stopped before its end,
// if any.
func (c *cli) planToRun(arg string) (plan, session string, err error) {
	r, err := c.records()
	if err != nil {
		return "", "", err
	}
	plan = arg
	if _, beads := planfile.BeadsEpic(arg); !beads {
		if plan, err = c.planName(r, arg); err != nil {
			return "", "", err
		}
	}
	if err := trackerReady(r, plan); err != nil {
		return "", "", err
	}
	session = planfile.SessionToResume(r.Fs, r.Root, plan)
	if plan == memory.TasksFile {
		plan = "" // the default plan, as a run without PLAN names it
	}
	return plan, session, nil
}

// trackerReady is the one check, before the project opens, that the
// plan ralph run works or ralph plan writes into can be used: the file
// reads, or for Beads bd runs and finds its database (and the epic).
// Run before the project opens, it fails before the model is asked
// anything and before any file is written, so a failed command leaves
// nothing behind.
func trackerReady(r Records, plan string) error {
	_, err := planfile.OpenTracker(r.Fs, r.Root, plan)
	return err
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
		return "", &planfile.PlanError{Msg: fmt.Sprintf("the plan %s is outside the project %s", arg, r.Root)}
	}
	return filepath.ToSlash(rel), nil
}

// runElsewhere runs the task loop on another engine when --engine or the
// config's [engine] says so; ok is false for the local loop.
func (c *cli) runElsewhere(ctx context.Context, face *OneShot, settle func(*memory.RunConfig) (*memory.RunConfig, error),
	changed func(string) bool) (code int, ok bool) {
	root, err := c.root()
	if err != nil {
		return face.Fail(ExitUsage, err), true
	}
	cfg, err := project.LoadConfig(root, os.Getenv)
	if err != nil {
		return face.Fail(ExitUsage, err), true
	}
	e := engineFlags().over(cfg.Engine, c.f.engine, changed)
	switch e.Name {
	case "", "local":
		return 0, false
	case temporal.Engine:
	default:
		return face.Fail(ExitUsage, fmt.Errorf("--engine must be local or temporal, not %q", e.Name)), true
	}
	start, err := c.temporalStart(settle, cfg, changed, face.Confirmer() != nil)
	if err != nil {
		return face.Fail(ExitUsage, err), true
	}
	if start.Prompt, err = promptText(root, start.Run.PromptTemplate, cfg.PromptTemplate); err != nil {
		return face.Fail(ExitUsage, err), true
	}
	return runTemporal(ctx, face, temporal.Run{Root: root, Engine: e, Start: start}), true
}

// temporalStart is what a run on Temporal is started with: the loop's
// settings, and the session's that its workers take where they tighten
// their own (remote.Session). A flag the settings table refuses there,
// or a setting the loop on Temporal cannot run, is the sentence why.
// terminal says a person reads the run at this terminal, where the
// workflow's questions are asked.
func (c *cli) temporalStart(settle func(*memory.RunConfig) (*memory.RunConfig, error), cfg config.Config, changed func(string) bool,
	terminal bool) (remote.Start, error) {
	if err := refusedRunFlag(changed); err != nil {
		return remote.Start{}, err
	}
	sess, err := c.f.temporalSession(changed)
	if err != nil {
		return remote.Start{}, err
	}
	rc, err := settle(nil)
	if err != nil {
		return remote.Start{}, err
	}
	project.FromConfig(rc, cfg)
	// What the loop on Temporal cannot do is refused here, in one
	// sentence, rather than dropped on the way.
	if err := remote.Refused(*rc); err != nil {
		return remote.Start{}, err
	}
	start := remote.Start{Run: *rc, Session: sess, MaxWait: cfg.MaxWait}
	if c.f.maxWaitSet {
		start.MaxWait = c.f.maxWait
	}
	// The workflow asks the loop's questions where a local run of the
	// same command would (project.LoopAsks), and waits as long as ralph
	// answer would be waited for here; the timeout travels even when
	// nothing asks, as the setting it is.
	start.Ask, start.AskTimeout = project.LoopAsks(c.f.answersWithNoWait(), cfg.AnswerTimeout, terminal, os.Getenv)
	return start, nil
}

// promptText is the text of the run's prompt template, --prompt-template
// (an absolute path by now) before prompt_template in the config
// (relative to the project root), checked as the local run checks it;
// "" for ralph's own prompt.
func promptText(root, flag, configured string) (string, error) {
	path := configured
	if flag != "" {
		path = flag
	}
	if path == "" {
		return "", nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	// A template under the project is read through its door; one the
	// person named elsewhere is theirs.
	fs, err := rootfs.New(root)
	if err != nil {
		return "", err
	}
	var from afero.Fs = fs
	if !fs.Contains(path) {
		from = rootfs.Person()
	}
	if _, err := taskprompt.Load(from, path); err != nil {
		return "", err
	}
	data, err := afero.ReadFile(from, path)
	if err != nil {
		return "", fmt.Errorf("the prompt template %s cannot be read: %w", path, err)
	}
	return string(data), nil
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
	// Checked before the session was recorded too (project.Open); a
	// resumed session's plan may have changed since. RunLoop checks again
	// when it starts; here a bad loop fails before the face starts.
	rc := p.RunConfig()
	if err := p.CheckLoop(rc); err != nil {
		return fail(project.ExitCode(err), err), nil
	}
	// Messages from another terminal reach ralph's own agents, not a CLI
	// agent's.
	external := rc.Agent != ""
	face.Model, face.Provider, face.Cwd, face.ConfiguredStyle = p.Config.Model, p.Config.Provider, p.Root, p.Config.Style
	n := notify.New(p.Root, p.Session.ID, p.Config.NotifyCommand, p.Config.APIKeyEnv, t, face.Stderr)
	n.Hook = p.NotifyHooks
	face.SetNotifier(n)
	face.Start()
	defer face.Close()
	// Another terminal steers the loop: ralph stop is the hard stop Ctrl-C
	// queues, ralph pause and continue act on the loop, and ralph say
	// reaches the agents working tasks at their next step boundary.
	// Approvals are asked at the terminal when there is one and through
	// ralph answer; the loop's own questions (the budget, the breaker)
	// only where there is a terminal or --wait-for-answers: without
	// either, its limits stop it.
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
	// The loop's own questions follow project.LoopAsks, as a run on
	// Temporal does: at the terminal, and through ralph answer when a
	// person said they would answer from another terminal.
	var ask func(context.Context, string) bool
	if term := face.Confirmer(); p.LoopAsks(term != nil) {
		ask = term
		if questions != nil {
			ask = questions.Confirmer(term)
		}
	}
	// Stop and switch: a Ctrl-C at a terminal stops and saves the loop;
	// the person goes on talking to the same coordinator, and /run
	// resumes the loop, ending it as this run would have.
	intoChat := func(res loop.Result) bool {
		return res.Reason == loop.ReasonInterrupted && res.Signal == syscall.SIGINT && face.Format == FormatText && t.InTTY && t.ErrTTY
	}
	start, prior := time.Now(), p.Session.State()
	run, err := assemble.RunLoop(ctx, p, assemble.LoopFace{Coord: coord, Queue: queue, Control: ctl, Ask: ask, Notify: face.Notify, Handoff: intoChat})
	if err != nil {
		return fail(project.ExitCode(err), err), nil
	}
	res := run.Result
	if run.HandedOff {
		at.StopSignals()
		// The Ctrl-C stopped the loop, not ralph: what it held to the
		// end of the process (every git's two seconds) is let go.
		interrupts.CarryOn()
		face.Close()
		fmt.Fprintf(face.Stderr, "ralph: stopped the task loop (%d done, %d failed) — state saved; this is chat now: /run resumes the loop, Ctrl-D leaves\n",
			len(res.Done), len(res.Failed))
		return 0, &Handoff{Queue: queue, Coord: coord}
	}
	for _, n := range run.Notes {
		fmt.Fprintf(face.Stderr, "ralph: %s\n", n)
	}
	return face.FinishLoop(res, p.Session.ID, time.Since(start), p.Session.State().Usage, prior, run.Counts), nil
}

// reviewValue takes a mode written after a bare --review ("--review end",
// which the flag's optional value leaves as an argument) as the flag's
// value, so both spellings keep meaning what they say. It returns the
// arguments left.
func reviewValue(cmd *cobra.Command, args []string, review *string) []string {
	if mode, rest := splitReview(cmd, args, *review); mode != "" {
		*review = mode
		return rest
	}
	return args
}

// splitReview finds the mode written after a bare --review among args:
// it returns the mode and the arguments after it, or "" when there is
// none.
func splitReview(cmd *cobra.Command, args []string, review string) (string, []string) {
	fl := cmd.Flags().Lookup("review")
	if fl == nil || !fl.Changed || review != assemble.ReviewTask || len(args) == 0 {
		return "", args
	}
	if args[0] == assemble.ReviewTask || args[0] == assemble.ReviewEnd {
		return args[0], args[1:]
	}
	return "", args
}

// loopArgs is ralph run's and ralph resume's one argument at most, not
// counting a mode written after a bare --review ("ralph run --review end
// PLAN").
func loopArgs(review *string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		_, rest := splitReview(cmd, args, *review)
		return cobra.MaximumNArgs(1)(cmd, rest)
	}
}

// loopGCPercent is the garbage collector's target for a task loop (Go's
// GOGC): the heap may grow to five times what is live before a
// collection, where Go's default lets it double. A loop keeps its plan
// parsed, ten thousand tasks of records, and each task's edit copies its
// lines anew: at the default, collections marking that whole plan were a
// fifth of the loop's own time on a 10,000-task plan, and the task cost
// 1.5 times as much more than on a 100-task plan; at 400 they cost a
// quarter as often, for a peak of some tens of megabytes more on such a
// plan (BenchmarkLoopPlanSize, BenchmarkRunPlan).
const loopGCPercent = 400

// loopCollector sets loopGCPercent for this process, unless the person
// set GOGC themselves.
func loopCollector() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(loopGCPercent)
	}
}
