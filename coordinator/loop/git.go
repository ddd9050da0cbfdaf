package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Workspace is where one attempt at a task works: the project itself, or
// a git worktree of the task's own (ralph run --worktrees).
type Workspace struct {
	// Dir is the attempt's project directory; "" is the project root.
	Dir string
	// Branch is the worktree's branch, "" in the project itself.
	Branch string
	// Tools are the file and command tools rooted in Dir, sandboxed as
	// the project's are; nil means the project's own.
	Tools *tools.Toolset
}

// TaskGit is git's part in the task loop, which coordinator/taskgit implements:
// a checkpoint of the work tree after every attempt (so ralph diff and
// ralph undo take --task), a commit per done task (--commit), a worktree
// per task merged back when it is done (--worktrees). A loop without git
// has none. Every method is called from the loop's goroutine except
// Workspace, which runs beside other attempts.
type TaskGit interface {
	// Workspace prepares where an attempt works; an error fails the
	// attempt.
	Workspace(ctx context.Context, task planfile.Task, attempt int) (Workspace, error)
	// Ended records the work tree after an attempt ended, however it did,
	// and returns the files it changed in the project (nil for none, or
	// when the attempt worked in a worktree of its own). written, when
	// not nil, are the only paths that can have changed (Outcome.Written):
	// the record looks at them alone.
	Ended(ctx context.Context, task planfile.Task, attempt int, ws Workspace, written []string) []git.FileChange
	// Done keeps the work of a completed and verified attempt: a commit,
	// a merge. It returns a sentence on what it did ("" for nothing) and
	// the files the merge changed in the project. An error wrapping
	// git.ErrMergeConflict fails the task for good (a retry would meet the
	// same conflict); any other error fails the attempt.
	Done(ctx context.Context, task planfile.Task, attempt int, summary string, ws Workspace) (string, []git.FileChange, error)
	// Close removes the worktrees, at the loop's end or a hard stop, and
	// says what it kept (a branch holding unfinished work).
	Close(ctx context.Context) []string
}

// ErrWorkspace wraps a failure to prepare an attempt's workspace.
var ErrWorkspace = errors.New("cannot prepare the task's workspace")

// prepare returns the attempt's workspace: the project without git.
func (l *loop) prepare(ctx context.Context, t planfile.Task, attempt int) (Workspace, error) {
	if l.o.Git == nil {
		return Workspace{}, nil
	}
	ws, err := l.o.Git.Workspace(ctx, t, attempt)
	if err != nil {
		return Workspace{}, fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	return ws, nil
}

// ended records an attempt's end in git and tells the faces which files
// it changed. The attempt's context may be cancelled (a hard stop): the
// checkpoint is bounded by git's own timeout instead. verified says the
// verify commands ran since the attempt: they may have changed any file
// (a build's output, a formatter), so the record looks at every one.
func (l *loop) ended(ctx context.Context, d attemptDone, verified bool) {
	if l.o.Git == nil {
		return
	}
	written := d.out.Written
	if verified {
		written = nil
	}
	files := l.o.Git.Ended(context.WithoutCancel(ctx), d.task, d.attempt, d.ws, written)
	l.filesChanged(d.task, files)
}

func (l *loop) filesChanged(t planfile.Task, files []git.FileChange) {
	if len(files) > 0 {
		l.emit(event.Event{Type: event.FilesChanged, Files: files, Text: coordinator.FilesSummary(files), Task: t.ID})
	}
}

// keepWork commits (and merges) a done task's work. It returns what it
// did ("task X committed as SHA", "" for nothing), the failure that keeps
// the task from counting as done, "" when none, and whether that failure
// is final.
func (l *loop) keepWork(ctx context.Context, d attemptDone) (kept, failure string, final bool) {
	if l.o.Git == nil {
		return "", "", false
	}
	note, files, err := l.o.Git.Done(ctx, d.task, d.attempt, d.out.Summary, d.ws)
	l.filesChanged(d.task, files)
	if err != nil {
		if errors.Is(err, git.ErrMergeConflict) {
			l.markConflict(d.task, err)
			failure := err.Error() + "; the branch " + d.ws.Branch + " is kept"
			if l.o.Notify != nil {
				l.o.Notify(fmt.Sprintf("task %s failed: %s.", d.task.ID, failure))
			}
			return "", failure, true
		}
		var ce *git.CommandError
		if errors.As(err, &ce) && ce.Stderr != "" && ce.Stderr != ce.Message {
			return "", err.Error() + "\n" + ce.Stderr, false
		}
		return "", err.Error(), false
	}
	if note != "" {
		l.decide(memory.DecisionRecord{Kind: "task_committed", Task: d.task.ID, Detail: d.task.ID + ": " + note,
			Reason: "the task is done, and --commit keeps each done task's work as a commit of its own"})
		if l.o.Notify != nil {
			l.o.Notify(note)
		}
	}
	return note, "", false
}

// doneNote is the sentence a closed task's reason gives for its work:
// the commit keepWork made, or that none was made.
func doneNote(kept string) string {
	if kept == "" {
		return "done (no commit: ralph run --commit makes one per task)."
	}
	return kept + "."
}

// closeGit ends git's part in the loop: worktrees are removed.
func (l *loop) closeGit(ctx context.Context) {
	if l.o.Git == nil {
		return
	}
	for _, notice := range l.o.Git.Close(context.WithoutCancel(ctx)) {
		l.decide(memory.DecisionRecord{Kind: "worktree", Detail: notice, Reason: "the loop ended, so its worktrees are removed"})
		if l.o.Notify != nil {
			l.o.Notify(notice)
		}
	}
}

// markConflict names, in the task's line of the task file, the files a
// merge conflicted in and the branch that holds the task's work, so the
// person sees both beside the [!].
func (l *loop) markConflict(t planfile.Task, err error) {
	var me *git.MergeError
	if !errors.As(err, &me) {
		return
	}
	_, uerr := l.updateTasks(&t, func(f *planfile.TaskFile) error {
		// A file name with a space cannot be one word of the task's
		// metadata; the error log and the notice still name it.
		if files := strings.Join(me.Files, ","); !strings.ContainsFunc(files, unicode.IsSpace) {
			if err := f.SetMeta(t.ID, "conflict", files); err != nil {
				return err
			}
		}
		return f.SetMeta(t.ID, "branch", me.Branch)
	})
	if uerr != nil && !errors.Is(uerr, planfile.ErrTaskNotFound) {
		l.keep(uerr)
	}
}
