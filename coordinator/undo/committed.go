package undo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// A task that `ralph run --commit` (or --worktrees) finished is on the
// person's branch as ralph's commit (or merge) naming it in its trailers.
// Putting its files back in the work tree alone left the branch holding
// the commit (git status then showed the files deleted), the task done in
// the task file and the report: half an undo. So the undo of such a task
// takes the commit back with a revert commit (git.RevertCommit, which
// names the task it reopens, so a recovery after a crash never counts the
// task done by the commit again), reopens the task in the task file and
// says so in the progress file and the session's records, so that ralph
// report agrees. Nothing the person committed since moves: the revert is
// a commit on top. When the revert cannot be made as it stands (a later
// commit changed the same lines, or the person's uncommitted changes are
// in the way), nothing is done and the refusal says what to run.

// ErrRevertRefused says a committed task's undo was refused (exit 1).
var ErrRevertRefused = errors.New("not undone")

// Reverted is a task's commit an undo took back with a revert commit.
type Reverted struct {
	Task   string `json:"task"`
	Commit string `json:"commit"`
	Revert string `json:"revert"`
	// Merge: the commit is the merge of the task's branch (--worktrees).
	Merge bool `json:"merge,omitempty"`
}

// taskCommits are the commits of one task, newest first.
type taskCommits struct {
	id      string
	commits []string
}

// committedTasks are the tasks of ch's task entries whose commits in
// session are on the branch and not reverted, in the order of the
// entries.
func committedTasks(ctx context.Context, repo *git.Repo, session string, ch *Changes) ([]taskCommits, error) {
	var out []taskCommits
	seen := map[string]bool{}
	for _, e := range ch.Entries {
		if e.Kind != git.KindTask || e.Task == "" || seen[e.Task] {
			continue
		}
		seen[e.Task] = true
		commits, err := repo.TaskCommits(ctx, session, e.Task)
		if err != nil {
			return nil, err
		}
		if len(commits) > 0 {
			out = append(out, taskCommits{id: e.Task, commits: commits})
		}
	}
	return out, nil
}

// undoCommitted takes back the committed tasks of ch: a revert of each
// commit, the task reopened, and the undo recorded as a checkpoint, so
// that the next undo goes to the change before and diff calls this one
// undone.
func undoCommitted(ctx context.Context, cps *checkpoint.Checkpoints, w undoWhere, ch *Changes, tasks []taskCommits) (*Result, error) {
	repo := cps.Repo()
	cps.Ready()
	// As an undo of files does (restore.go), from the checkpoint before
	// the reverts to the one after them.
	ctx, release, err := cps.Hold(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	cps.Record(ctx, git.Entry{Kind: git.KindResume}, "before-undo")
	res := &Result{Session: w.target, What: ch.What, TooBig: ch.TooBig}
	for _, tc := range tasks {
		for _, c := range tc.commits {
			msg := git.RevertMessage(c, repo.Subject(ctx, c), tc.id)
			rv, err := repo.RevertCommit(ctx, c, msg)
			if err != nil {
				return nil, refusal(err, tc.id, c, w)
			}
			res.Reverted = append(res.Reverted, Reverted{Task: tc.id, Commit: c, Revert: rv.Commit, Merge: repo.Rev(ctx, c+"^2") != ""})
			for _, f := range rv.Files {
				if !slices.Contains(res.Restored, f) {
					res.Restored = append(res.Restored, f)
				}
			}
		}
		reopen(w, tc.id, res.Reverted)
		res.Reopened = append(res.Reopened, tc.id)
	}
	slices.Sort(res.Restored)
	var refs []string
	for _, e := range ch.Entries {
		refs = append(refs, e.Ref)
	}
	if cp := cps.Record(ctx, git.Entry{Kind: git.KindUndo, Undone: strings.Join(refs, " ")}, fmt.Sprintf("undo-%d", len(w.log))); cp != nil {
		res.Checkpoint = cp.Commit
	}
	return res, nil
}

// refusal is the one sentence of an undo whose revert could not be made,
// with what the person can run.
func refusal(err error, id, commit string, w undoWhere) error {
	var re *git.RevertError
	if !errors.As(err, &re) {
		return fmt.Errorf("%w: task %s: the revert of ralph's commit %s failed: %w", ErrRevertRefused, id, commit[:min(12, len(commit))], err)
	}
	files := strings.Join(re.Files, ", ")
	if re.Dirty {
		return fmt.Errorf("%w: task %s is still done, because its revert would overwrite your uncommitted changes to %s: commit or stash them (`git stash`), then run `%s --task %s` again",
			ErrRevertRefused, id, files, w.again, id)
	}
	return fmt.Errorf("%w: task %s is still done, because a later commit changed %s where ralph's commit %s did: revert it yourself (`git revert %s`, resolving the conflict), then mark the task open (`[ ]`) in %s",
		ErrRevertRefused, id, files, commit[:min(12, len(commit))], commit[:min(12, len(commit))], w.planName())
}

// reopen marks task id open again in the task file the session worked,
// tells the progress file why, and records the change in the session's
// events and decisions, which ralph report reads. A task the person has
// already reopened or removed is left as it is.
func reopen(w undoWhere, id string, reverted []Reverted) {
	var pairs []string
	for _, r := range reverted {
		if r.Task == id {
			pairs = append(pairs, fmt.Sprintf("commit %s reverted by %s", r.Commit[:min(12, len(r.Commit))], r.Revert[:min(12, len(r.Revert))]))
		}
	}
	why := strings.Join(pairs, ", ")
	title := ""
	if tr, err := planfile.OpenTracker(w.fs, w.root, w.plan); err == nil {
		_, _ = tr.Update(func(f *planfile.TaskFile) error {
			t, ok := f.Find(id)
			if !ok {
				return nil
			}
			title = t.Title
			if t.State != planfile.TaskDone {
				return nil
			}
			return f.SetState(t.ID, planfile.TaskOpen)
		})
	}
	_ = memory.AppendProgress(w.fs, w.root, memory.ProgressEntry{Title: "Reopened: " + orID(title, id), SessionID: w.target.ID,
		Body: fmt.Sprintf("ralph undo took task %s back (%s) and reopened it.", id, why)})
	if w.session == nil {
		return
	}
	now := time.Now()
	_ = w.session.AppendEvent(event.Event{Type: event.TaskChanged, Time: now, Task: id, Output: title,
		Text: id + ": done -> " + string(planfile.TaskOpen)})
	_ = w.session.AppendLog(memory.DecisionsLog, memory.DecisionRecord{Time: now, Kind: "task_reopened", Task: id, By: memory.DecidedByPerson,
		Detail: fmt.Sprintf("%s: ralph undo took the task back (%s) and reopened it", id, why),
		Reason: "the person undid the task's work; its commit is reverted, not erased, so a recovery never counts it done again"})
}

// orID is a task's title, or its id when the title is not known.
func orID(title, id string) string {
	if title != "" {
		return title
	}
	return "task " + id
}

// taskTitle is the title of task id in the project's task file, "" when
// it is not there: what an undo of that task names it by.
func taskTitle(fs afero.Fs, root, plan, id string) string {
	tr, err := planfile.OpenTracker(fs, root, plan)
	if err != nil {
		return ""
	}
	f, err := tr.Load()
	if err != nil {
		return ""
	}
	if t, ok := f.Find(id); ok {
		return oneLineWords(t.Title)
	}
	return ""
}
