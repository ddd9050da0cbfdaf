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
	// Done are the tasks whose progress entry for their last attempt was
	// written: the work was done, only the mark was lost.
	Done []string
	// Reopened are the others, open again; their attempts= stays, so
	// the next attempt gets a new number.
	Reopened []string
}

// Count is how many tasks recovery changed.
func (r Recovered) Count() int { return len(r.Done) + len(r.Reopened) }

// RecoverInProgress is the one rule for a task a ralph that is gone left
// in progress ("[~]"), which every recovery applies (a project opened
// under its lock, a plan's tracker, Temporal's first look at a branch): a
// task whose attempts=N has its entry marked task=ID attempt=N in root's
// RALPH_PROGRESS.md is marked done, whichever session wrote the entry;
// every other one goes back to open, its attempts kept, so that its next
// attempt is N+1 and no entry of attempt N can be taken for that one's.
// The whole progress file is read, and only when a task is in progress.
// A progress file that cannot be read changes nothing and is an error:
// reopening a task whose entry cannot be seen could do it twice.
func RecoverInProgress(fs afero.Fs, root string, f *TaskFile) (Recovered, error) {
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
	for _, i := range inProgress {
		t := f.task(i)
		state := TaskOpen
		if t.Meta["id"] != "" && memory.HasProgressMark(progress, t.ID, t.Attempts) {
			state = TaskDone
		}
		if f.setState(i, state, stateChar[state]) != nil {
			continue
		}
		if state == TaskDone {
			rec.Done = append(rec.Done, t.ID)
		} else {
			rec.Reopened = append(rec.Reopened, t.ID)
		}
	}
	return rec, nil
}
