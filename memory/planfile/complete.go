package planfile

import (
	"errors"
	"fmt"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"
)

// A task is done once, and its completion is one durable record that
// recovery can read back. The order is fixed, for every face that marks a
// task done (the task loop, Temporal's integration, complete_task in chat):
//
//  1. starting an attempt marks the task "[~]" and writes its attempts=N
//     in one write of the task file (a first attempt's is implied and
//     only the checkbox is written, see StartAttempt);
//  2. the task's progress entry is appended to RALPH_PROGRESS.md and
//     synced, ending in the mark <!-- ralph:progress task=ID attempt=N
//     session=S -->;
//  3. only then is the task marked done.
//
// A ralph that dies, or a write that fails, between 2 and 3 leaves a task
// "[~]" whose entry exists: RecoverInProgress marks it done rather than
// working it again. An entry that could not be written leaves the task
// not done. The mark names the task and the attempt, never an activity's
// retry or a time, so writing it twice (a Temporal activity runs at least
// once, a new session recovers an old one's task) writes one entry.

// ErrProgressNotWritten is a task that was not marked done because its
// progress entry could not be written. The error it wraps says why (a
// full disk, an I/O error).
var ErrProgressNotWritten = errors.New("the task's progress entry could not be written, so the task is not marked done")

// CompleteTask marks a task done the one way recovery can read back:
// e, whose TaskID and Attempt name the task and its attempt, is appended
// to RALPH_PROGRESS.md and synced first (written once: an entry of the
// same task and attempt already there is not written again), and only
// then does markDone mark the task done. When the entry cannot be
// written, markDone is not called and the error wraps
// ErrProgressNotWritten; markDone's own error is returned as it is, the
// entry then being on disk for recovery to find.
func CompleteTask(fs afero.Fs, root string, e memory.ProgressEntry, markDone func() error) error {
	if err := memory.AppendProgress(fs, root, e); err != nil {
		return fmt.Errorf("%w: %w", ErrProgressNotWritten, err)
	}
	return markDone()
}

// Recovered is what RecoverInProgress did with the tasks a ralph that is
// gone left in progress.
type Recovered struct {
	// Done are the tasks whose last attempt was recorded: its progress
	// entry was written, or its commit landed; only the mark was lost.
	Done []string
	// Landed are those of Done whose progress entry was missing and was
	// written from the commit that landed, by id.
	Landed map[string]string
	// Reopened are the others, open again; their attempts= stays, so
	// the next attempt gets a new number.
	Reopened []string
}

// Count is how many tasks recovery changed.
func (r Recovered) Count() int { return len(r.Done) + len(r.Reopened) }

// LandedFunc says whether the git step of task t's last attempt
// (t.Attempts) landed: the commit on the project's branch that carries
// the attempt's trailers (memory/git's TaskLanded), "" when there is none
// or it was reverted. It is asked only of a task whose progress entry is
// missing. An error means it cannot tell; the task is then not reopened.
type LandedFunc func(t Task) (commit string, err error)

// RecoverInProgress is the one rule for a task a ralph that is gone left
// in progress ("[~]"), which every recovery applies (a project opened
// under its lock, a plan's tracker, Temporal's first look at a branch): a
// task whose attempts=N has its entry marked task=ID attempt=N in root's
// RALPH_PROGRESS.md is marked done, whichever session wrote the entry;
// so is one whose attempt's commit landed (landed, nil outside git), a
// ralph killed between its commit or merge and its entry: the entry is
// written first, saying so, as CompleteTask orders it. Every other one
// goes back to open, its attempts kept, so that its next attempt is N+1
// and no entry of attempt N can be taken for that one's. The whole
// progress file is read, and only when a task is in progress. A progress
// file that cannot be read, or a commit that cannot be looked for,
// changes nothing and is an error: reopening a task whose entry or
// commit cannot be seen could do it twice.
func RecoverInProgress(fs afero.Fs, root string, f *TaskFile, landed LandedFunc) (Recovered, error) {
	var rec Recovered
	var inProgress []int
	for i := range f.tasks {
		if f.tasks[i].state == TaskInProgress {
			inProgress = append(inProgress, i)
		}
	}
	if len(inProgress) == 0 {
		return rec, nil
	}
	progress, err := memory.ReadProgress(fs, root)
	if err != nil {
		return rec, fmt.Errorf("cannot tell which tasks in progress were done: %w", err)
	}
	// Every answer first: a task file left half settled by an error
	// would be no rule at all.
	states := make([]TaskState, len(inProgress))
	commits := map[int]string{}
	for n, i := range inProgress {
		t := f.task(i)
		states[n] = TaskOpen
		switch {
		case t.Meta["id"] == "":
		case memory.HasProgressMark(progress, t.ID, t.Attempts):
			states[n] = TaskDone
		case landed != nil:
			c, err := landed(t)
			if err != nil {
				return rec, fmt.Errorf("cannot tell whether task %s's commit landed: %w", t.ID, err)
			}
			if c != "" {
				states[n], commits[i] = TaskDone, c
			}
		}
	}
	for n, i := range inProgress {
		t := f.task(i)
		if c := commits[i]; c != "" {
			// The completion record is the entry; the commit only says
			// the work was kept. Written once, as any task's entry.
			if err := memory.AppendProgress(fs, root, memory.ProgressEntry{Title: t.Title, TaskID: t.ID, Attempt: t.Attempts,
				Body: fmt.Sprintf("Recovered from commit %s: ralph stopped after the task's commit and before this entry.", c)}); err != nil {
				return rec, fmt.Errorf("%w: %w", ErrProgressNotWritten, err)
			}
		}
		if f.setState(i, states[n], stateChar[states[n]]) != nil {
			continue
		}
		if states[n] != TaskDone {
			rec.Reopened = append(rec.Reopened, t.ID)
			continue
		}
		rec.Done = append(rec.Done, t.ID)
		if c := commits[i]; c != "" {
			if rec.Landed == nil {
				rec.Landed = map[string]string{}
			}
			rec.Landed[t.ID] = c
		}
	}
	return rec, nil
}
