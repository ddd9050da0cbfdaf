package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"mvdan.cc/sh/v3/shell"

	"github.com/ralph-dev/ralph/coordinator/assemble"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/agents"
)

// The task loop's flags are declared once, here: each row names a flag
// and the field of the settings it sets. The same rows register the
// flags of ralph run and ralph resume, put the flags given over a saved
// or configured value, and parse /run's in chat. What ralph-temporal
// needs of them travels as the run configuration itself (remote.Start),
// never as flags; a row says whether it travels there (settings.go).

// setting is one flag and the field of S it sets.
type setting[S any] struct {
	name string
	// temporal is how the flag travels to a run on Temporal, why the
	// sentence it is refused with there (settings.go).
	temporal travel
	why      string
	// bind registers the flag on fl, writing into s's field.
	bind func(fl *pflag.FlagSet, s *S)
	// take copies the flag's field of src into dst.
	take func(dst, src *S)
}

// settings are the flags of one kind of settings.
type settings[S any] []setting[S]

// field is a flag registered by pflag's typed Var function (IntVar,
// StringVar, ...) writing into the field get returns.
func field[S, T any](register func(*pflag.FlagSet, *T, string, T, string), name string, def T, usage string, get func(*S) *T) setting[S] {
	return setting[S]{name: name, temporal: carried,
		bind: func(fl *pflag.FlagSet, s *S) { register(fl, get(s), name, def, usage) },
		take: func(dst, src *S) { *get(dst) = *get(src) }}
}

// refuse is the setting refused on Temporal with the sentence why.
func (s setting[S]) refuse(why string) setting[S] {
	s.temporal, s.why = refused, why
	return s
}

// here is the setting taken by the ralph that starts a run on Temporal.
func (s setting[S]) here() setting[S] {
	s.temporal = here
	return s
}

// register adds every flag to fl, writing into s.
func (t settings[S]) register(fl *pflag.FlagSet, s *S) {
	for _, f := range t {
		f.bind(fl, s)
	}
}

// over puts the flags given (changed reports them) from flags over
// base: a flag not given leaves base's value.
func (t settings[S]) over(base, flags S, changed func(string) bool) S {
	for _, f := range t {
		if changed(f.name) {
			f.take(&base, &flags)
		}
	}
	return base
}

// Typed registrations, as pflag names them.
var (
	intFlag      = (*pflag.FlagSet).IntVar
	floatFlag    = (*pflag.FlagSet).Float64Var
	stringFlag   = (*pflag.FlagSet).StringVar
	stringsFlag  = (*pflag.FlagSet).StringArrayVar
	boolFlag     = (*pflag.FlagSet).BoolVar
	durationFlag = (*pflag.FlagSet).DurationVar
)

// duration is a run configuration's duration as the flag's type.
func duration(get func(*memory.RunConfig) *memory.Duration) func(*memory.RunConfig) *time.Duration {
	return func(rc *memory.RunConfig) *time.Duration { return (*time.Duration)(get(rc)) }
}

// runFlags are the task loop's flags, of ralph run and ralph resume.
// --parallel is not among them: it is every command's (chat's children
// too), and the run takes it as one of them (parallelFlag).
func runFlags() settings[memory.RunConfig] {
	d := loop.DefaultRun()
	type rc = memory.RunConfig
	return settings[rc]{
		field(intFlag, "max-iterations", d.MaxIterations, "stop after this many task attempts", func(r *rc) *int { return &r.MaxIterations }),
		field(stringFlag, "on-error", d.OnError, "after a failed attempt: retry, skip (mark failed) or abort", func(r *rc) *string { return &r.OnError }),
		field(intFlag, "retries", d.Retries, "with --on-error retry: attempts after the first before a task is marked failed", func(r *rc) *int { return &r.Retries }),
		field(floatFlag, "max-cost", 0, "stop when the known cost in USD reaches this (0: no limit)", func(r *rc) *float64 { return &r.MaxCost }),
		field(stringFlag, "until", "", "stop, successfully, once this condition holds, e.g. 'tasks_done >= 5'", func(r *rc) *string { return &r.Until }),
		field(stringFlag, "breaker", "", "circuit breaker condition (default 'no_progress >= 3 || same_error_repeats >= 3')", func(r *rc) *string { return &r.Breaker }),
		field(stringFlag, "verify", "", "command that must pass before a task counts as done, e.g. 'go test ./...'", func(r *rc) *string { return &r.Verify }),
		field(stringFlag, "agent", "", "work tasks with an external CLI ("+agents.Choices()+") or an agent definition (NAME, or def:NAME)", func(r *rc) *string { return &r.Agent }),
		field(stringsFlag, "agent-arg", nil, "an argument for the agent's command line, after ralph's own (repeat it for more: --agent-arg=--model --agent-arg=opus)", func(r *rc) *[]string { return &r.AgentArgs }).
			refuse("--engine temporal does not carry --agent-arg: an argument could undo the sandbox a worker matches its agent to; set it in the worker's own [agents.<kind>] args"),
		field(durationFlag, "task-timeout", time.Duration(d.TaskTimeout), "time limit of one task attempt", duration(func(r *rc) *memory.Duration { return &r.TaskTimeout })),
		field(durationFlag, "breaker-cooldown", time.Duration(d.BreakerCooldown),
			"with nobody to ask, how long the tripped circuit breaker waits before it lets one task through (doubles after each failed one)",
			duration(func(r *rc) *memory.Duration { return &r.BreakerCooldown })),
		field(boolFlag, "commit", false, "one git commit per done task, holding only that task's files", func(r *rc) *bool { return &r.Commit }),
		field(boolFlag, "worktrees", false, "work each task in a git worktree of its own on a branch ralph/<task-id>, merged back when done (implies --commit)", func(r *rc) *bool { return &r.Worktrees }),
		reviewFlag(),
		field(intFlag, "review-rounds", 3, "with --review: most review-and-fix rounds", func(r *rc) *int { return &r.ReviewRounds }).refuse(noReviewers),
		field(stringFlag, "reviewer", "", "with --review: run the reviewers as another agent ("+agents.Choices()+"), read-only", func(r *rc) *string { return &r.Reviewer }).refuse(noReviewers),
		field(boolFlag, "archive-done", false, "when the plan's last task is done, move the plan file to plans_dir/completed (as ralphex does)", func(r *rc) *bool { return &r.ArchiveDone }),
		field(stringFlag, "prompt-template", "", "Go text/template FILE the task prompts are made from (config prompt_template; fields: "+taskprompt.Fields+")",
			func(r *rc) *string { return &r.PromptTemplate }),
		parallelFlag(),
	}
}

// settleRun is the task loop's configuration for flags given (changed
// reports which) over a saved one (nil for a new loop), checked: ralph
// run's, ralph resume's and /run's in chat. An error is bad input.
func settleRun(saved *memory.RunConfig, given memory.RunConfig, changed func(string) bool) (*memory.RunConfig, error) {
	rc := given
	if rc.PromptTemplate != "" {
		// Saved for resume, which may run from another directory.
		abs, err := filepath.Abs(rc.PromptTemplate)
		if err != nil {
			return nil, fmt.Errorf("--prompt-template %s: %w", rc.PromptTemplate, err)
		}
		rc.PromptTemplate = abs
	}
	if saved != nil {
		// The saved configuration, with the flags given here over it.
		rc = runFlags().over(*saved, rc, changed)
		if changed("verify") {
			rc.VerifyFromPlan = false // the person's own now
		}
	}
	// A worktree's work reaches the branch only as a commit.
	rc.Commit = rc.Commit || rc.Worktrees
	if rc.Agent != "" {
		// A definition's bare name, as the one-shot's --agent takes it;
		// saved as def:NAME, so a resume reads it the same way.
		rc.Agent = agentdefs.AsSpec(rc.Agent, func(v string) error { _, err := agents.Parse(v); return err })
	}
	return &rc, loop.CheckRun(&rc)
}

// runArgs puts the flags of chat's /run ARGS over the session's task
// loop configuration and saves it there, where the loop it starts (and
// the next /run, and ralph resume) find it. ARGS are ralph run's loop
// flags, split as a shell splits words (no variable is expanded), read
// through the same rows as ralph run's. A flag ralph run does not take
// here, or a value it refuses, is the one sentence why, and nothing
// changes.
func runArgs(p *project.Project, args string) error {
	words, err := shell.Fields(args, func(string) string { return "" })
	if err != nil {
		return fmt.Errorf("cannot read %q as flags: %w", args, err)
	}
	fl := pflag.NewFlagSet("/run", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	var given memory.RunConfig
	runFlags().register(fl, &given)
	fl.IntVar(&given.Parallel, "parallel", 0, "tasks at once")
	if err := fl.Parse(words); err != nil {
		return fmt.Errorf("%w (/run takes ralph run's task loop flags: ralph run --help lists them)", err)
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("/run takes ralph run's task loop flags, not %q", fl.Arg(0))
	}
	rc, err := settleRun(p.RunConfig(), given, fl.Changed)
	if err != nil {
		return err
	}
	return p.UseRun(rc)
}

// reviewFlag is --review, which people type bare to mean the review of
// each task.
func reviewFlag() setting[memory.RunConfig] {
	s := field(stringFlag, "review", "", "reviewer agents read the work before it counts: task (after each task passes verify; bare --review) or end (once, after the last); confirmed findings are fixed (config review)",
		func(r *memory.RunConfig) *string { return &r.Review })
	bind := s.bind
	s.bind = func(fl *pflag.FlagSet, r *memory.RunConfig) {
		bind(fl, r)
		fl.Lookup("review").NoOptDefVal = assemble.ReviewTask
	}
	return s.refuse(noReviewers)
}

// noReviewers is the sentence the review flags are refused with on
// Temporal.
const noReviewers = "--engine temporal has no reviewers for --review, --reviewer or --review-rounds; run reviews with the local engine"

// parallelFlag is --parallel as the run takes it: registered by the root
// command for every command, so only taken here.
func parallelFlag() setting[memory.RunConfig] {
	return setting[memory.RunConfig]{name: "parallel", temporal: carried, bind: func(*pflag.FlagSet, *memory.RunConfig) {},
		take: func(dst, src *memory.RunConfig) { dst.Parallel = src.Parallel }}
}

// engineFlags are ralph run's flags of where the loop runs, put over the
// config's [engine] table.
func engineFlags() settings[config.Engine] {
	type e = config.Engine
	return settings[e]{
		field(stringFlag, "engine", "", "where the task loop runs: local (the default) or temporal (config [engine] name)", func(x *e) *string { return &x.Name }).here(),
		field(stringFlag, "address", "", "with --engine temporal: the Temporal frontend, HOST:PORT", func(x *e) *string { return &x.Address }).here(),
		field(stringFlag, "namespace", "", "with --engine temporal: the Temporal namespace (default \"default\")", func(x *e) *string { return &x.Namespace }).here(),
		field(stringFlag, "task-queue", "", "with --engine temporal: the task queue the workers poll (default \"ralph\")", func(x *e) *string { return &x.TaskQueue }).here(),
	}
}

// trackerChoice is ralph run's --tracker and --epic: where the tasks
// come from when no PLAN is named, over the config's tracker.
type trackerChoice struct {
	Tracker, Epic string
}

func (t *trackerChoice) register(fl *pflag.FlagSet) {
	fl.StringVar(&t.Tracker, "tracker", "", "where the tasks come from: files (RALPH_TASKS.md or PLAN, the default) or beads (Beads' bd; config tracker)")
	fl.StringVar(&t.Epic, "epic", "", "with --tracker beads: work the issues under this epic (ralph plans lists them; default: every ready issue)")
}

// plan is the plan ralph run works: planArg as given, or the Beads plan
// the tracker and epic name ("beads:EPIC"). root is the project, whose
// config may name the tracker.
func (t trackerChoice) plan(root, planArg string, changed func(string) bool) (string, error) {
	tracker := t.Tracker
	if !changed("tracker") {
		tracker = configuredTracker(root)
	}
	switch tracker {
	case "", config.TrackerFiles:
		if changed("epic") {
			return "", fmt.Errorf("--epic names a Beads epic: use it with --tracker beads")
		}
		return planArg, nil
	case config.TrackerBeads:
	default:
		return "", fmt.Errorf("--tracker must be %s or %s, not %q", config.TrackerFiles, config.TrackerBeads, tracker)
	}
	if planArg != "" {
		if _, ok := planfile.BeadsEpic(planArg); ok {
			return planArg, nil
		}
		if changed("tracker") || changed("epic") {
			return "", fmt.Errorf("name either a plan file (%s) or a Beads epic (--epic), not both", planArg)
		}
		return planArg, nil // a plan file named wins over the config's tracker
	}
	if strings.ContainsAny(t.Epic, " \t:") {
		return "", fmt.Errorf("--epic %q is not a Beads issue id", t.Epic)
	}
	return planfile.BeadsPlanName(t.Epic), nil
}

// configuredTracker is the tracker the config of the project at root
// names, "" when it names none or cannot be read (opening the project
// says why).
func configuredTracker(root string) string {
	cfg, err := project.LoadConfig(root, os.Getenv)
	if err != nil {
		return ""
	}
	return cfg.Tracker
}
