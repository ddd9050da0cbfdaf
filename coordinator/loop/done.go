package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// A task the loop settles as done is recorded by planfile.CompleteTask: its
// progress entry first, synced, then its mark. A write that fails is never
// reported as done:
//
//   - the entry could not be written on a full disk: nothing of the
//     completion is on disk, so the task goes back to open and the run
//     waits for space, as for any attempt a full disk stopped; the task is
//     worked again then;
//   - the entry could not be written for another reason (an I/O error):
//     the task goes back to open and the run stops;
//   - the entry is written but the mark is not, on a full disk: the task
//     is done, and is marked so once there is space; until then the task
//     file shows it in progress, which recovery also reads as done;
//   - the entry is written but the mark is not, for another reason: the
//     run stops with the task in progress, and the next run's recovery
//     marks it done from its entry.

// doneAttempt is an attempt settled as done: the attempt and its verify
// run.
type doneAttempt struct {
	d      attemptDone
	verify *event.VerifyRun
}

// ReasonProgressNotWritten is a run stopped because a task's progress
// entry could not be written (not for want of space, which is waited out).
const ReasonProgressNotWritten = "cannot write the progress file"

// complete records a done attempt's completion, o being its settlement
// and kept what git did with its work: the tracker's note, then the
// progress entry and the task's mark (planfile.CompleteTask).
func (l *loop) complete(a doneAttempt, o machine.Outcome, kept string) (Result, bool) {
	t := a.d.task
	if n, ok := l.o.Tasks.(planfile.DoneNoter); ok {
		// A tracker that closes the task with a reason (Beads) names the
		// commit and the cost in it.
		n.NoteDone(t.ID, strings.TrimSpace(fmt.Sprintf("ralph session %s, attempt %d: %s %s", l.o.SessionID, a.d.attempt, doneNote(kept), o.Spent())))
	}
	// A task's completion is one durable record (planfile.CompleteTask):
	// the entry, marked with the task and this attempt, is synced before
	// the task is marked done, and recovery marks a task left in
	// progress done when its attempt's entry is there.
	entry := o.Progress(time.Now(), l.o.SessionID, l.m.Iterations())
	entry.Title, entry.Body = l.o.Redactor.Redact(entry.Title), l.o.Redactor.Redact(entry.Body)
	err := planfile.CompleteTask(l.o.Fs, l.o.Root, entry, func() error {
		_, err := l.updateTasks(&t, func(f *planfile.TaskFile) error { return f.SetState(t.ID, planfile.TaskDone) })
		return err
	})
	if err != nil {
		return l.notRecorded(a, err)
	}
	return l.recordDone(a)
}

// recordDone counts an attempt whose task is marked done: the machine
// settles it.
func (l *loop) recordDone(a doneAttempt) (Result, bool) {
	r := reported(a.d)
	r.Verify = a.verify
	h := &host{l: l, ctx: context.Background()}
	return h.settle(machine.Settle(r).Counted())
}

// notRecorded settles a done attempt whose completion could not be
// recorded whole (see above). It reports whether the loop must stop.
func (l *loop) notRecorded(a doneAttempt, err error) (Result, bool) {
	t := a.d.task
	written := !errors.Is(err, planfile.ErrProgressNotWritten)
	if memory.IsDiskFull(err) {
		if written && l.o.MaxWait > 0 {
			l.unmarked = append(l.unmarked, a)
			l.pauseForDisk(err)
			l.decide(memory.DecisionRecord{Kind: "limit_wait", Task: t.ID,
				Detail: t.ID + " is done and its progress entry written; it is marked done once there is space; " + l.m.Wait().Text,
				Reason: "the task file could not be written on a full disk; working the task again would do it twice"})
			return Result{}, false
		}
		if !written && l.o.MaxWait > 0 {
			// Nothing of the completion is on disk: the attempt waits
			// for space as any other a full disk cut short.
			r := reported(a.d)
			r.Verify = a.verify
			h := &host{l: l, ctx: context.Background()}
			return h.settle(machine.Settle(r).OnFullDisk(l.fullDisk(err)))
		}
		if !written {
			err = fmt.Errorf("%w: %s (ralph does not wait with --max-wait 0)", planfile.ErrProgressNotWritten, memory.DiskFull(l.o.Root, err).Error())
		} else {
			err = memory.ExplainDiskFull(err, l.o.Root)
		}
	}
	if !written {
		// Nothing of the completion is on disk: the task is not done.
		_, uerr := l.updateTasks(&t, func(f *planfile.TaskFile) error { return f.SetState(t.ID, planfile.TaskOpen) })
		if uerr != nil && !errors.Is(uerr, planfile.ErrTaskNotFound) {
			l.keep(uerr)
		}
		ev := attemptEnded(a.d, planfile.TaskOpen, a.verify, err.Error())
		ev.IsError = true
		l.emit(ev)
		return Result{Reason: ReasonProgressNotWritten, IsError: true, Err: err}, true
	}
	// The entry is on disk, the mark is not: the task stays in progress,
	// and the next run's recovery marks it done.
	return Result{Reason: "cannot update the task file", IsError: true,
		Err: fmt.Errorf("%s is done and its progress entry written, but it could not be marked done (the next ralph run marks it): %w", t.ID, err)}, true
}

// markUnmarked marks done the tasks whose entry a full disk kept from
// being followed by their mark, now that there may be space. It reports
// whether the disk is still full.
func (l *loop) markUnmarked() bool {
	for len(l.unmarked) > 0 {
		a := l.unmarked[0]
		t := a.d.task
		_, err := l.updateTasks(nil, func(f *planfile.TaskFile) error { return f.SetState(t.ID, planfile.TaskDone) })
		if memory.IsDiskFull(err) {
			return true
		}
		l.unmarked = l.unmarked[1:]
		if err != nil && !errors.Is(err, planfile.ErrTaskNotFound) {
			// The next run's recovery marks it done from its entry.
			l.keep(err)
			continue
		}
		l.recordDone(a)
	}
	return false
}
