package loop

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/agents"
)

// verdict is an external agent's attempt's error: the run's own
// (cancelled, timed out), the failure the agent reported, or what
// contradicts its claim that the task is done — a tool its permissions
// refused, a last command that failed, or a work tree that did not change
// although the agent did not say the task needed no change. nil means done
// as far as the agent's account goes; the loop's --verify comes next.
// exec: agents have no structured account, so only their exit status
// counts.
func verdict(ctx context.Context, agent agents.Agent, res agents.Result, runErr error, before *workState) error {
	if runErr != nil {
		return runErr
	}
	if !res.Completed && res.Limit != nil {
		// The agent's account is out of its allowance: the loop waits for
		// the reset instead of failing the task.
		return &agents.UsageLimitError{Agent: agent.Kind, UsageLimit: *res.Limit}
	}
	if why := res.Failure(agent.Kind); why != "" {
		return errors.New(why)
	}
	if !res.Completed && len(res.Denials) > 0 {
		// The agent stopped at a call its permissions refused (opencode's
		// run ends there): the attempt fails naming the call, not only
		// for want of the marker.
		return errors.New(res.Contradiction(agent.Kind))
	}
	if !res.Completed || agent.Kind == agents.AgentExec {
		return nil
	}
	if why := res.Contradiction(agent.Kind); why != "" {
		return errors.New(why)
	}
	if before != nil && !res.NoChanges && before.unchanged(ctx) {
		return fmt.Errorf("%s said the task was done but no file changed; %s (a task that needs no change ends with %s)",
			agent.Kind, agent.Writes(), agents.NoChangesMarker)
	}
	return nil
}

// workState is the work tree's state before an attempt, in a git work
// tree; nil without git, where no such check is possible.
type workState struct {
	repo    *git.Repo
	exclude []string
	state   string
}

// takeWorkState records the state of the tree the agent works in. The task
// loop's own files (the task list, the progress log, .ralph/) do not
// count: the loop writes them while the attempt runs.
func takeWorkState(ctx context.Context, agent agents.Agent, plan string) *workState {
	if agent.Kind == agents.AgentExec {
		return nil
	}
	repo, err := git.Open(ctx, agent.Root)
	if err != nil {
		return nil
	}
	w := &workState{repo: repo}
	for _, f := range []string{memory.StateDir, memory.TasksFile, memory.ProgressFile, plan} {
		if f == "" {
			continue
		}
		w.exclude = append(w.exclude, repo.Prefix+f)
	}
	if w.state, err = repo.WorkState(ctx, w.exclude...); err != nil {
		return nil
	}
	return w
}

// unchanged reports whether the tree is as it was; an error reading it
// counts as changed, so that git's trouble never fails a task.
func (w *workState) unchanged(ctx context.Context) bool {
	now, err := w.repo.WorkState(context.WithoutCancel(ctx), w.exclude...)
	return err == nil && now == w.state
}
