package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/tools"
)

// ErrBadRunConfig is a task loop configuration that cannot work (a
// condition that does not compile, an unknown agent): exit 2.
var ErrBadRunConfig = errors.New("bad run configuration")

// usageErr is a run configuration the loop cannot start with. It keeps
// the sentence as it is and exits 2, as ErrBadRunConfig does.
type usageErr struct{ err error }

func (u usageErr) Error() string        { return u.err.Error() }
func (u usageErr) Unwrap() error        { return u.err }
func (u usageErr) Is(target error) bool { return target == ErrBadRunConfig }

// BadRunConfig is err as a run configuration the loop cannot start
// with: its sentence as it is, matching ErrBadRunConfig (exit 2).
func BadRunConfig(err error) error { return usageErr{err} }

// RunConfig is the session's run configuration: what the task loop was
// started with (and saved, so /run and ralph resume go on with it), else
// `ralph run`'s defaults.
func (p *Project) RunConfig() *memory.RunConfig {
	if rc := p.Session.State().Run; rc != nil {
		return rc
	}
	d := loop.DefaultRun()
	return &d
}

// CheckLoop is what must hold before a task loop starts: the run
// configuration compiles, its plan has a task that can start, and its
// prompt template reads. It is checked again when a stopped loop goes
// on, since the plan or the template may have changed meanwhile.
func (p *Project) CheckLoop(rc *memory.RunConfig) error {
	if _, err := loop.Compile(rc); err != nil {
		return usageErr{err}
	}
	if err := p.checkAttribution(rc); err != nil {
		return usageErr{err}
	}
	// A loop with nothing to work would end at once saying "all tasks
	// done": say what is wrong instead.
	tr, err := p.Tracker(rc)
	if err != nil {
		return err
	}
	if err := planfile.CheckRunnable(tr); err != nil {
		return err
	}
	// Read now, so a template edited during a chat counts, and a bad one
	// stops the loop before it starts.
	if err := p.loadPrompt(rc); err != nil {
		return usageErr{err}
	}
	return nil
}

// checkRunGit checks, before any work, that git can do what the run's
// --commit and --worktrees ask: a repository, a branch to commit on, the
// person's name and email, and (for worktrees) a commit to branch from.
func checkRunGit(ctx context.Context, run *memory.RunConfig, root string) error {
	if run == nil || !run.Commit && !run.Worktrees {
		return nil
	}
	flag := "--commit"
	if run.Worktrees {
		flag = "--worktrees"
	}
	repo, err := git.Open(ctx, root)
	if err != nil {
		return fmt.Errorf("%s needs a git repository, and this project is not in a git work tree", flag)
	}
	if _, err := repo.Branch(ctx); errors.Is(err, git.ErrDetached) {
		return fmt.Errorf("%s will not commit on a detached HEAD, where commits are easily lost: check out a branch first (git switch BRANCH, or git switch -c BRANCH)", flag)
	} else if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if err := repo.Identity(ctx); err != nil {
		return fmt.Errorf("%s needs your name and email for its commits: set them with git config user.name and git config user.email", flag)
	}
	if run.Worktrees && repo.HeadNow(ctx) == "" {
		return fmt.Errorf("--worktrees needs a commit to branch from, and this branch has none yet")
	}
	if run.Worktrees {
		return checkWorktreesDir(root)
	}
	return nil
}

// TaskParallel is how many tasks the loop run configures works at once:
// its --parallel, else the session's (ralph --parallel N chat, then
// /run), else 0, which the loop's policy takes as 1.
func (p *Project) TaskParallel(run *memory.RunConfig) int {
	if run.Parallel > 0 {
		return run.Parallel
	}
	return p.parallel
}

// checkAttribution refuses --commit with tasks side by side in one work
// tree: a file is committed as the work tree holds it, and a task's
// commit would hold what the others wrote meanwhile, under its name.
// Only a worktree per task keeps each commit to its own task's files.
// The loop on Temporal always works each task on a branch of its own,
// so this is the local loop's check alone.
func (p *Project) checkAttribution(run *memory.RunConfig) error {
	if run == nil || !run.Commit || run.Worktrees {
		return nil
	}
	if n := p.TaskParallel(run); n > 1 {
		return fmt.Errorf("--commit with --parallel %d would put tasks side by side in one work tree, where a task's commit holds the files the others wrote: add --worktrees (each task in a worktree of its own, committed exactly) or run one task at a time", n)
	}
	return nil
}

// checkWorktreesDir refuses a run whose task worktrees would be made
// through a symbolic link at .ralph or .ralph/worktrees. ralph never
// makes one there; a command may have (in the Landlock-only fallback
// commands can write .ralph/), to send the worktrees, and the removal of
// a leftover one, into the person's home or their source tree. Each
// worktree is made through the project's door as well (coordinator/
// taskgit), which refuses a link planted while the run goes on.
func checkWorktreesDir(root string) error {
	for _, rel := range []string{memory.StateDir, filepath.Join(memory.StateDir, "worktrees")} {
		if fi, err := os.Lstat(filepath.Join(root, rel)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("--worktrees will not make task worktrees through %s, a symbolic link where ralph keeps its own directory (a command may have planted it): remove the link and run again", filepath.ToSlash(rel))
		}
	}
	return nil
}

// settle decides the run configuration of a task-loop session and checks
// that the model can be reached when it is needed: an external agent
// (--agent) needs no key of ralph's.
func (p *Project) settle(opts Options, saved *memory.RunConfig) (*memory.RunConfig, error) {
	var run *memory.RunConfig
	if p.Mode == ModeRun && opts.Run != nil {
		var err error
		if run, err = opts.Run(saved); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRunConfig, err)
		}
		if err := p.checkRun(run); err != nil {
			return nil, err
		}
	}
	if p.Mode == ModeRun {
		// Before the session is recorded (or a resumed one set running):
		// a loop with nothing to do, or with a task that can never start,
		// must not leave a session behind that says it runs.
		tr, err := p.Tracker(run)
		if err != nil {
			return nil, err
		}
		if err := planfile.CheckRunnable(tr); err != nil {
			return nil, err
		}
		if run != nil && run.Verify == "" {
			// A ralphex plan's validation commands.
			run.Verify = tr.Verify()
			run.VerifyFromPlan = run.Verify != ""
		}
	}
	err := p.Config.Validate()
	if err != nil && !(run != nil && run.Agent != "" && !isDefinition(run.Agent) && errors.Is(err, config.ErrNoKey)) {
		return nil, err
	}
	return run, nil
}

// FromConfig fills in what a run configuration leaves to the config
// (review), for a run on any engine. The prompt template is not among
// them: prompt_template is read where the prompt is made (loadPrompt), so
// an edited config counts on resume.
func FromConfig(run *memory.RunConfig, cfg config.Config) {
	if run.Review == "" {
		run.Review = cfg.Review
	}
}

// checkRun takes the config's part of a run configuration given on a
// command line and checks what the project must hold for it: the agent,
// git for --commit and --worktrees, the prompt template.
func (p *Project) checkRun(run *memory.RunConfig) error {
	FromConfig(run, p.Config)
	if err := p.checkDefinition(run); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRunConfig, err)
	}
	if err := checkAgent(run, p.Root); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRunConfig, err)
	}
	if err := checkRunGit(context.Background(), run, p.Root); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRunConfig, err)
	}
	if err := p.checkAttribution(run); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRunConfig, err)
	}
	if err := p.loadPrompt(run); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRunConfig, err)
	}
	return nil
}

// UseRun makes run the session's task loop configuration, as /run with
// flags in chat gives it: checked as ralph run checks its flags, then
// saved in the session, where the next /run and ralph resume find it.
// An error (ErrBadRunConfig) changes nothing.
func (p *Project) UseRun(run *memory.RunConfig) error {
	if err := p.checkRun(run); err != nil {
		return err
	}
	return p.Session.SaveState(func(st *memory.State) { st.Run = run })
}

// StartPlan makes write_plan ready for a new plan (ralph plan, /plan in
// chat), on the task list and the goals as they are now, which DropPlan
// puts back.
func (p *Project) StartPlan() (*tools.PlanWriter, error) {
	pw, err := tools.NewPlanWriter(p.Fs, p.Root)
	if err != nil {
		return nil, err
	}
	p.Tools.Add(tools.Deps{Plan: pw})
	p.planMu.Lock()
	p.plan = pw
	p.planMu.Unlock()
	return pw, nil
}

// ErrNoPlan is /plan drop with no plan made in this session.
var ErrNoPlan = errors.New("no plan was made here to drop; /plan FEATURE makes one")

// DropPlan puts the task list and the goals back as they were before the
// latest plan.
func (p *Project) DropPlan() error {
	p.planMu.Lock()
	pw := p.plan
	p.planMu.Unlock()
	if pw == nil {
		return ErrNoPlan
	}
	return pw.Drop()
}

// Tracker opens the plan a run configuration names: RALPH_TASKS.md when
// it names none (or rc is nil).
func (p *Project) Tracker(rc *memory.RunConfig) (planfile.Tracker, error) {
	plan := ""
	if rc != nil {
		plan = rc.Plan
	}
	return planfile.OpenTracker(p.Fs, p.Root, plan)
}

// loadPrompt reads the task loop's prompt template, --prompt-template
// (saved in the run configuration) before prompt_template in the config,
// and tries it on sample facts: a bad template is found before any task
// is touched. Without either the loop uses ralph's own prompt.
func (p *Project) loadPrompt(run *memory.RunConfig) error {
	path := p.Config.PromptTemplate
	if run != nil && run.PromptTemplate != "" {
		path = run.PromptTemplate
	}
	p.prompt = nil
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Root, path)
	}
	t, err := taskprompt.Load(p.fsFor(path), path)
	if err != nil {
		return err
	}
	p.prompt = t
	return nil
}

// fsFor is the file system that reads path: the project's door for a
// file under the project, the person's own for one they named elsewhere
// (--prompt-template ~/templates/task.tmpl).
func (p *Project) fsFor(path string) afero.Fs {
	if door, ok := p.Fs.(*rootfs.Fs); ok && !door.Contains(path) && p.Person != nil {
		return p.Person
	}
	return p.Fs
}

// PromptTemplate is the task loop's prompt template, nil for ralph's own
// prompt.
func (p *Project) PromptTemplate() *taskprompt.Template { return p.prompt }

// checkAgent checks that the run's external agent can start from the
// project root, where it runs: a relative exec: path is only known there.
func checkAgent(run *memory.RunConfig, root string) error {
	if run == nil || run.Agent == "" || isDefinition(run.Agent) {
		return nil
	}
	a, err := agents.Parse(run.Agent)
	if err != nil {
		return err
	}
	return a.Check(root)
}
