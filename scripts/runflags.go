package scripts

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers/agents"
)

// The task loop's flags are declared once, here: each row names a flag
// and the field of the settings it sets. The same rows register the
// flags of ralph run and ralph resume and put the flags given over a
// saved or configured value. What ralph-temporal needs of them travels
// as the run configuration itself (remote.Start), never as flags.

// setting is one flag and the field of S it sets.
type setting[S any] struct {
	name string
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
	return setting[S]{name: name,
		bind: func(fl *pflag.FlagSet, s *S) { register(fl, get(s), name, def, usage) },
		take: func(dst, src *S) { *get(dst) = *get(src) }}
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
		field(stringFlag, "agent", "", "work tasks with an external CLI: "+agents.Choices(), func(r *rc) *string { return &r.Agent }),
		field(stringsFlag, "agent-arg", nil, "an argument for the agent's command line, after ralph's own (repeat it for more: --agent-arg=--model --agent-arg=opus)", func(r *rc) *[]string { return &r.AgentArgs }),
		field(durationFlag, "task-timeout", time.Duration(d.TaskTimeout), "time limit of one task attempt", duration(func(r *rc) *memory.Duration { return &r.TaskTimeout })),
		field(durationFlag, "breaker-cooldown", time.Duration(d.BreakerCooldown),
			"with nobody to ask, how long the tripped circuit breaker waits before it lets one task through (doubles after each failed one)",
			duration(func(r *rc) *memory.Duration { return &r.BreakerCooldown })),
		field(boolFlag, "commit", false, "one git commit per done task, holding only that task's files", func(r *rc) *bool { return &r.Commit }),
		field(boolFlag, "worktrees", false, "work each task in a git worktree of its own on a branch ralph/<task-id>, merged back when done (implies --commit)", func(r *rc) *bool { return &r.Worktrees }),
		reviewFlag(),
		field(intFlag, "review-rounds", 3, "with --review: most review-and-fix rounds", func(r *rc) *int { return &r.ReviewRounds }),
		field(stringFlag, "reviewer", "", "with --review: run the reviewers as another agent ("+agents.Choices()+"), read-only", func(r *rc) *string { return &r.Reviewer }),
		field(boolFlag, "archive-done", false, "when the plan's last task is done, move the plan file to plans_dir/completed (as ralphex does)", func(r *rc) *bool { return &r.ArchiveDone }),
		field(stringFlag, "prompt-template", "", "Go text/template FILE the task prompts are made from (config prompt_template; fields: "+taskprompt.Fields+")",
			func(r *rc) *string { return &r.PromptTemplate }),
		parallelFlag(),
	}
}

// reviewFlag is --review, which people type bare to mean the review of
// each task.
func reviewFlag() setting[memory.RunConfig] {
	s := field(stringFlag, "review", "", "reviewer agents read the work before it counts: task (after each task passes verify; bare --review) or end (once, after the last); confirmed findings are fixed (config review)",
		func(r *memory.RunConfig) *string { return &r.Review })
	bind := s.bind
	s.bind = func(fl *pflag.FlagSet, r *memory.RunConfig) {
		bind(fl, r)
		fl.Lookup("review").NoOptDefVal = project.ReviewTask
	}
	return s
}

// parallelFlag is --parallel as the run takes it: registered by the root
// command for every command, so only taken here.
func parallelFlag() setting[memory.RunConfig] {
	return setting[memory.RunConfig]{name: "parallel", bind: func(*pflag.FlagSet, *memory.RunConfig) {},
		take: func(dst, src *memory.RunConfig) { dst.Parallel = src.Parallel }}
}

// engineFlags are ralph run's flags of where the loop runs, put over the
// config's [engine] table.
func engineFlags() settings[config.Engine] {
	type e = config.Engine
	return settings[e]{
		field(stringFlag, "engine", "", "where the task loop runs: local (the default) or temporal (config [engine] name)", func(x *e) *string { return &x.Name }),
		field(stringFlag, "address", "", "with --engine temporal: the Temporal frontend, HOST:PORT", func(x *e) *string { return &x.Address }),
		field(stringFlag, "namespace", "", "with --engine temporal: the Temporal namespace (default \"default\")", func(x *e) *string { return &x.Namespace }),
		field(stringFlag, "task-queue", "", "with --engine temporal: the task queue the workers poll (default \"ralph\")", func(x *e) *string { return &x.TaskQueue }),
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
		if _, ok := memory.BeadsEpic(planArg); ok {
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
	return memory.BeadsPlanName(t.Epic), nil
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
