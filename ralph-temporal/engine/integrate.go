package engine

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	rgit "github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// Integrate is the integration activity: on a clone of the target branch
// it merges the branches of tasks done, writes the tasks' states and
// attempts to RALPH_TASKS.md and their entries to RALPH_PROGRESS.md,
// commits and pushes. The workflow runs one at a time, so the markdown has
// a single writer. Run again after a partial success (its worker was lost
// after the push), it changes nothing twice: a merged branch merges as a
// no-op, a state is set to what it is, and a progress entry is written
// once per task and run.
func (a *Activities) Integrate(ctx context.Context, in IntegrateInput) (IntegrateResult, error) {
	dir := filepath.Join(a.repos.of(in.Project.Remote).root, "integrate")
	// Heartbeats, so a lost worker's integration moves on as soon as an
	// attempt's would.
	hb := &heartbeat{b: beat{Phase: "integrating", Worker: a.name}}
	defer hb.start(ctx)()
	var res IntegrateResult
	// The push races people and other tools pushing to the branch: on a
	// rejection it starts again from the branch as it now is.
	var err error
	for try := 0; try < 5; try++ {
		res, err = a.integrateOnce(ctx, dir, in)
		var ce *rgit.CommandError
		if err == nil || !errors.As(err, &ce) || ce.Command != "push" {
			break
		}
	}
	return res, err
}

func (a *Activities) integrateOnce(ctx context.Context, dir string, in IntegrateInput) (IntegrateResult, error) {
	res := IntegrateResult{Conflicts: map[string]string{}}
	p := in.Project
	if err := clone(ctx, p.Remote, dir, false); err != nil {
		return res, err
	}
	for _, args := range [][]string{{"checkout", "--quiet", "--force", "-B", p.Branch, "origin/" + p.Branch}, {"reset", "--quiet", "--hard", "origin/" + p.Branch}, {"clean", "-fdq"}} {
		if _, err := runGit(ctx, dir, args...); err != nil {
			return res, err
		}
	}
	var ids []string
	for _, u := range in.Updates {
		ids = append(ids, u.ID)
		if !u.Merge {
			continue
		}
		if c := merge(ctx, dir, p, u.ID); c != "" {
			res.Conflicts[u.ID] = c
		}
	}
	// The clone is a project like any other: its task file goes through
	// its door, which follows no link a command of an attempt planted.
	fs, err := rootfs.New(dir)
	if err != nil {
		return res, err
	}
	// A task is done in memory's one order (planfile.CompleteTask): its
	// progress entry first, then its mark. Both land in one commit pushed
	// at once, so here the order only keeps to the rule; an entry already
	// on the branch (this activity ran before and pushed) is not written
	// again.
	for _, u := range in.Updates {
		if u.Progress != nil && res.Conflicts[u.ID] == "" {
			if err := memory.AppendProgress(fs, dir, *u.Progress); err != nil {
				return res, err
			}
		}
	}
	tasksPath := filepath.Join(dir, memory.TasksFile)
	before, err := afero.ReadFile(fs, tasksPath)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return res, err
	}
	if err := writeUpdates(ctx, fs, dir, in.Updates, res.Conflicts); err != nil {
		return res, fmt.Errorf("cannot update %s on %s: %w", memory.TasksFile, p.Branch, err)
	}
	// The task list's commit is memory/git's one task commit, of the two
	// state files only, as an attempt's is of everything but them.
	repo, err := rgit.Open(ctx, dir)
	if err != nil {
		return res, fmt.Errorf("the integration's clone: %w", err)
	}
	msg := "ralph: task list"
	if len(ids) > 0 {
		msg = "ralph: " + strings.Join(ids, ", ")
	}
	if _, err := repo.CommitWork(ctx, msg+"\n\nrun "+in.SessionID, rgit.WorkCommit{Only: stateFiles, NoHooks: true, AsRalph: asRalph()}); err != nil {
		return res, err
	}
	if err := repo.Push(ctx, "origin", "HEAD:refs/heads/"+p.Branch, false); err != nil {
		return res, err
	}
	data, err := afero.ReadFile(fs, tasksPath)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return res, err
	}
	if in.Base != "" && taskHash(string(before)) == in.Base {
		d := diffTasks(string(before), string(data))
		res.Diff = &d
	} else {
		res.Tasks = string(data)
	}
	res.Head, _ = runGit(ctx, dir, "rev-parse", "HEAD")
	return res, nil
}

// writeUpdates writes the attempts' settled states into the clone's task
// file at dir, through fs: a task whose merge conflicted keeps its branch
// named instead. With no update it is the run's first look, which
// settles what a crashed local run left in progress.
func writeUpdates(ctx context.Context, fs afero.Fs, dir string, updates []TaskUpdate, conflicts map[string]string) error {
	_, err := planfile.UpdateTasks(fs, dir, func(f *planfile.TaskFile) error {
		f.AssignIDs(nil)
		if len(updates) == 0 {
			// The run's first look: a task a crashed local run left in
			// progress is settled as the local loop's recovery settles
			// it: done when its progress entry is there or its task
			// commit (--commit's, by its trailers) is on the branch,
			// else open.
			if _, err := planfile.RecoverInProgress(fs, dir, f, landedOn(ctx, dir)); err != nil {
				return err
			}
		}
		for _, u := range updates {
			if c := conflicts[u.ID]; c != "" {
				_ = f.SetMeta(u.ID, "branch", rgit.TaskBranch(u.ID))
				continue
			}
			if err := f.SetState(u.ID, u.State); err != nil && !errors.Is(err, planfile.ErrTaskNotFound) {
				return err
			}
			if u.Attempts > 0 {
				if err := f.SetMeta(u.ID, "attempts", strconv.Itoa(u.Attempts)); err != nil && !errors.Is(err, planfile.ErrTaskNotFound) {
					return err
				}
			}
		}
		return nil
	})
	return err
}

// merge merges ralph/<id> into the checked-out target branch. It returns
// "" on success (or when the task pushed no branch), else the sentence
// saying where it conflicted; the merge is then undone and the branch
// kept for a person.
func merge(ctx context.Context, dir string, p Project, id string) string {
	ref := "origin/" + rgit.TaskBranch(id)
	if _, err := runGit(ctx, dir, "rev-parse", "--verify", "--quiet", ref); err != nil {
		return ""
	}
	_, err := runGit(ctx, dir, "merge", "--quiet", "--no-ff", "--no-edit", "-m", fmt.Sprintf("ralph: merge %s (task %s)", rgit.TaskBranch(id), id), ref)
	if err == nil {
		return ""
	}
	files, _ := runGit(ctx, dir, "diff", "--name-only", "--diff-filter=U")
	_, _ = runGit(ctx, dir, "merge", "--abort")
	if files == "" {
		return fmt.Sprintf("merging %s into %s failed: %v; the branch %s is kept", rgit.TaskBranch(id), p.Branch, err, rgit.TaskBranch(id))
	}
	return fmt.Sprintf("merging %s into %s conflicted in %s; the branch %s is kept", rgit.TaskBranch(id), p.Branch,
		strings.Join(strings.Fields(files), ", "), rgit.TaskBranch(id))
}

// landedOn is recovery's look at the integration's clone in dir for a
// task left in progress (planfile.LandedFunc): the commit of its last
// attempt on the checked-out branch, by its trailers. A task branch of a
// local run's worktree is not in the clone, and is not looked for.
func landedOn(ctx context.Context, dir string) planfile.LandedFunc {
	return func(t planfile.Task) (string, error) {
		repo, err := rgit.Open(ctx, dir)
		if err != nil {
			return "", fmt.Errorf("the integration's clone: %w", err)
		}
		l, err := repo.TaskLanded(ctx, t.ID, t.Attempts)
		if err != nil || !l.Done() {
			return "", err
		}
		return l.Commit, nil
	}
}
