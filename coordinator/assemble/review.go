package assemble

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/review"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
)

// Review modes of ralph run (--review, review in the config).
const (
	ReviewTask = "task"
	ReviewEnd  = "end"
)

// reviewOptions are a run's review settings: the project's reviewers
// (.ralph/reviewers) or the defaults, and its rounds.
func reviewOptions(p *project.Project, rc *memory.RunConfig, coord *coordinator.Coordinator, notify func(string)) (review.Options, error) {
	reviewers, err := review.LoadReviewers(p.Door, p.Fs, p.Root)
	if err != nil {
		return review.Options{}, err
	}
	o := review.Options{Reviewers: reviewers, Rounds: rc.ReviewRounds, Record: coord.RecordDecision, Note: notify}
	if rc.Reviewer != "" {
		if o.Agent, err = ReviewerAgent(p, rc.Reviewer, time.Duration(rc.TaskTimeout)); err != nil {
			return review.Options{}, err
		}
	}
	return o, nil
}

// ReviewerAgent runs reviewers as another agent (--reviewer codex), in a
// read-only sandbox whatever the run's: a reviewer reads and reports.
func ReviewerAgent(p *project.Project, spec string, timeout time.Duration) (review.ExternalReviewer, error) {
	agent, err := agents.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: --reviewer: %w", project.ErrBadRunConfig, err)
	}
	settings := p.Config.Agents[string(agent.Kind)]
	agent = agent.Configure(agents.Policy{Sandbox: "read-only"},
		agents.Settings{Args: settings.Args, Env: settings.Env, Model: settings.Model}, nil)
	agent.Root, agent.Timeout = p.Root, timeout
	agent.DropEnv = []string{p.Config.APIKeyEnv}
	return func(ctx context.Context, prompt string) (string, conversation.Usage, error) {
		res, err := agent.Run(ctx, prompt, func(agents.Event) {})
		return res.Text, res.Usage, err
	}, nil
}

// TaskReview is the task loop's review of each attempt that passed
// verify (ralph run --review task), nil when the run reviews none then.
// It reads what the attempt changed (since the checkpoint before it, or
// the uncommitted work of the task's own worktree), and fails the
// attempt when a confirmed major finding is left after the rounds.
func TaskReview(p *project.Project, rc *memory.RunConfig, coord *coordinator.Coordinator, notify func(string)) loop.ReviewFunc {
	if rc == nil || rc.Review != ReviewTask {
		return nil
	}
	return func(ctx context.Context, t planfile.Task, attempt int, ws loop.Workspace, verify string) string {
		diff, ok := attemptDiff(ctx, p, t, attempt, ws)
		if !ok {
			return fmt.Sprintf("review: task %s cannot be reviewed: its changes cannot be read without git", t.ID)
		}
		o, err := reviewOptions(p, rc, coord, notify)
		if err != nil {
			return "review: " + err.Error()
		}
		goals, _ := memory.Goals(p.Door, p.Fs, p.Root, 8<<10)
		rep, err := review.Run(ctx, coord, review.Input{TaskID: t.ID, Task: t.Title, Goals: goals, Verify: verify, Diff: diff}, o)
		switch {
		case errors.Is(err, review.ErrNothingToReview):
			return ""
		case err != nil:
			// A review that could not be done (ErrIncomplete among them)
			// fails the attempt: the task was not reviewed.
			return "review: " + err.Error()
		case !rep.Clean:
			var left []string
			for _, f := range rep.Findings {
				if f.Round == rep.Rounds && f.Severity == review.Major && f.Verdict == review.Confirmed {
					left = append(left, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Why))
				}
			}
			return fmt.Sprintf("review: confirmed major %s left after %s: %s", text.Plural(len(left), "finding", "findings"), text.Counted(rep.Rounds, "round", "rounds"), strings.Join(left, "; "))
		}
		return ""
	}
}

// attemptDiff reads what a task's attempt changed: in the task's own
// worktree its uncommitted work, else the work tree against the
// checkpoint the attempt's own checkpoint followed.
func attemptDiff(ctx context.Context, p *project.Project, t planfile.Task, attempt int, ws loop.Workspace) (func(context.Context) (string, error), bool) {
	if ws.Dir != "" {
		repo, err := git.Open(ctx, ws.Dir)
		if err != nil {
			return nil, false
		}
		return func(ctx context.Context) (string, error) { return repo.ReviewDiff(ctx, "HEAD") }, true
	}
	g := p.Git(ctx)
	cps := g.Checkpoints()
	if cps == nil {
		return nil, false
	}
	base := ""
	suffix := fmt.Sprintf("-%d", attempt)
	for _, e := range g.TaskEntries(t.ID) {
		if strings.HasSuffix(e.Ref, suffix) {
			base = e.Parent
		}
	}
	if base == "" {
		// The attempt changed nothing a checkpoint saw.
		return func(context.Context) (string, error) { return "", nil }, true
	}
	return func(ctx context.Context) (string, error) { return cps.Repo().ReviewDiff(ctx, base) }, true
}

// RunReview reviews the work of the whole run once it has ended (ralph
// run --review end): the work tree against the session's first
// checkpoint. It returns the report, or why there was none.
func RunReview(ctx context.Context, p *project.Project, rc *memory.RunConfig, coord *coordinator.Coordinator, notify func(string)) (review.Report, error) {
	cps := p.Checkpoints(ctx)
	log := p.CheckpointLog(p.Session.ID)
	if cps == nil || len(log) == 0 {
		return review.Report{}, errors.New("the run's work cannot be read without git")
	}
	base := log[0].Commit
	o, err := reviewOptions(p, rc, coord, notify)
	if err != nil {
		return review.Report{}, err
	}
	goals, _ := memory.Goals(p.Door, p.Fs, p.Root, 8<<10)
	return review.Run(ctx, coord, review.Input{Goals: goals,
		Diff: func(ctx context.Context) (string, error) { return cps.Repo().ReviewDiff(ctx, base) }}, o)
}
