package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/taskprompt"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/repl"
	"github.com/ralph-dev/ralph/scripts"
)

// addLoopCommands wires `ralph run` and `ralph resume`, which share the
// task loop's flags: resume restores a loop's saved configuration and the
// flags given to it override that.
func (c *cli) addLoopCommands(root *cobra.Command) {
	f := &c.f
	runCmd := &cobra.Command{
		Use:     "run",
		Short:   "Work through RALPH_TASKS.md on its own until done, a stop condition, or a limit",
		Long:    scripts.RunHelp,
		Example: runExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			if len(args) == 1 {
				f.session = args[0]
			}
			return exit(c.loop(cmd, "", true))
		},
	}
	d := scripts.DefaultRun()
	for _, cmd := range []*cobra.Command{runCmd, resume} {
		fl := cmd.Flags()
		fl.IntVar(&f.run.MaxIterations, "max-iterations", d.MaxIterations, "stop after this many task attempts")
		fl.StringVar(&f.run.OnError, "on-error", d.OnError, "after a failed attempt: retry, skip (mark failed) or abort")
		fl.IntVar(&f.run.Retries, "retries", d.Retries, "with --on-error retry: attempts after the first before a task is marked failed")
		fl.Float64Var(&f.run.MaxCost, "max-cost", 0, "stop when the known cost in USD reaches this (0: no limit)")
		fl.StringVar(&f.run.Until, "until", "", "stop, successfully, once this condition holds, e.g. 'tasks_done >= 5'")
		fl.StringVar(&f.run.Breaker, "breaker", "", "circuit breaker condition (default 'no_progress >= 3 || same_error_repeats >= 3')")
		fl.StringVar(&f.run.Verify, "verify", "", "command that must pass before a task counts as done, e.g. 'go test ./...'")
		fl.StringVar(&f.run.Agent, "agent", "", "work tasks with an external CLI: claude, codex or exec:'<command>'")
		fl.StringArrayVar(&f.run.AgentArgs, "agent-arg", nil, "an argument for the agent's command line, after ralph's own (repeat it for more: --agent-arg=--model --agent-arg=opus)")
		fl.DurationVar(&f.taskTimeout, "task-timeout", time.Duration(d.TaskTimeout), "time limit of one task attempt")
		fl.DurationVar(&f.breakerCool, "breaker-cooldown", time.Duration(d.BreakerCooldown),
			"with nobody to ask, how long the tripped circuit breaker waits before it lets one task through (doubles after each failed one)")
		fl.DurationVar(&f.maxWait, "max-wait", config.DefaultMaxWait,
			"longest wait for a rate or usage limit to reset before a task fails instead (config max_wait; 0: never wait)")
		fl.BoolVar(&f.run.Commit, "commit", false, "one git commit per done task, holding only that task's files")
		fl.BoolVar(&f.run.Worktrees, "worktrees", false, "work each task in a git worktree of its own on a branch ralph/<task-id>, merged back when done (implies --commit)")
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
	face, code := scripts.NewOneShot(c.format(), c.term)
	if code != 0 {
		return code
	}
	c.f.maxWaitSet = cmd.Flags().Changed("max-wait")
	if c.f.maxWait < 0 {
		return face.Fail(scripts.ExitUsage, fmt.Errorf("--max-wait cannot be negative (got %s); 0 means never wait", c.f.maxWait))
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
		return &rc, scripts.CheckRun(&rc)
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
		return scripts.OneShotMain(ctx, p, face, "", true)
	}
	code, handoff := scripts.RunMain(ctx, p, face, c.term)
	if handoff != nil {
		return repl.Main(ctx, p, repl.MainOptions{Term: c.term, Version: version, Queue: handoff.Queue, Coord: handoff.Coord})
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
	return rc
}

// runElsewhere runs the task loop on another engine when --engine or the
// config's [engine] says so; ok is false for the local loop.
func (c *cli) runElsewhere(ctx context.Context, face *scripts.OneShot, settle func(*memory.RunConfig) (*memory.RunConfig, error)) (code int, ok bool) {
	root, err := project.Root(c.f.dir)
	if err != nil {
		return face.Fail(scripts.ExitUsage, err), true
	}
	cfg, err := config.Load(config.Sources{Fs: afero.NewOsFs(), ProjectRoot: root, UserConfigDir: config.UserConfigDir(), Getenv: os.Getenv})
	if err != nil {
		return face.Fail(scripts.ExitUsage, err), true
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
	case scripts.EngineTemporal:
	default:
		return face.Fail(scripts.ExitUsage, fmt.Errorf("--engine must be local or temporal, not %q", e.Name)), true
	}
	rc, err := settle(nil)
	if err != nil {
		return face.Fail(scripts.ExitUsage, err), true
	}
	maxWait := cfg.MaxWait
	if c.f.maxWaitSet {
		maxWait = c.f.maxWait
	}
	return scripts.RunTemporal(ctx, face, scripts.TemporalRun{Root: root, Engine: e, Run: *rc, MaxWait: maxWait}), true
}
