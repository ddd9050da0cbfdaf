package loop

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// A full disk stops every attempt the same way — git cannot write a
// checkpoint, ralph its records, the model's tools their files — until
// someone frees space. An unattended run must not spend its attempts and
// trip its breaker on that, so an attempt that failed while the project's
// file system was full (or on an error that says so) is treated like a
// rate limit: the task goes back to open, the attempt is not counted, the
// loop says once why it waits (session.json's wait, a limit_wait event, a
// notification) and starts nothing until there is room again.

// diskPoll is how often the loop looks at the free space while it waits;
// statfs costs microseconds.
var diskPoll = time.Second

// quotaWait is how long the loop waits when an error said the disk or a
// quota was full but the file system shows space (a quota, or space freed
// meanwhile): long enough not to spend model calls on a retry a second.
var quotaWait = time.Minute

// diskFull reports whether the attempt that ended with err and failure
// failed on a full disk: an error of ralph's own in its chain says so, or
// the project's file system is full now. The failure's text is not read:
// it may hold the model's own summary, and a model that wrote "no space
// left on device" there must not get its attempts waived.
func (l *loop) diskFull(err error, failure string) bool {
	if failure == "" {
		return false
	}
	return memory.IsDiskFull(err) || memory.DiskLow(l.o.Root)
}

// waitForDisk is waitForLimit for a full disk: the task goes back to open
// (or, while nothing can be written, is reopened when there is space) and
// the attempt is not counted. It returns "" when the loop waits, or the
// failure sentence when the person's --max-wait 0 says it never waits.
func (l *loop) waitForDisk(d attemptDone, cause error) string {
	full := memory.DiskFull(l.o.Root, cause)
	if l.o.MaxWait <= 0 {
		return full.Error() + " (ralph does not wait with --max-wait 0)"
	}
	t := d.task
	if _, err := l.updateTasks(&t, func(f *planfile.TaskFile) error { return f.SetState(t.ID, planfile.TaskOpen) }); memory.IsDiskFull(err) {
		l.reopen = append(l.reopen, t.ID)
	} else if err != nil && !errors.Is(err, planfile.ErrTaskNotFound) {
		l.keep(err)
	}
	l.m.Waive(machine.Settle(reported(d)))
	l.emit(attemptEnded(d, planfile.TaskOpen, nil, full.Error()))
	l.pauseForDisk(cause)
	l.decide(memory.DecisionRecord{Kind: "limit_wait", Task: t.ID,
		Detail: t.ID + " goes back to open; " + l.diskWait.Text,
		Reason: "attempt " + strconv.Itoa(d.attempt) + " failed on a full disk: " + text.Clip(full.Error(), 300) + "; no attempt can succeed before there is space, so waiting spends no retry"})
	return ""
}

// noDiskWait ends the loop on a task file a full disk kept from being
// written, when the person's --max-wait 0 says it never waits.
func (l *loop) noDiskWait(err error) Result {
	return Result{Reason: "cannot update the task file", IsError: true,
		Err: fmt.Errorf("%w (ralph does not wait with --max-wait 0)", memory.ExplainDiskFull(err, l.o.Root))}
}

// lookAgain keeps waiting after a write failed for want of space: a
// second when the file system shows itself full, a minute when it shows
// space (a quota).
func (l *loop) lookAgain(now time.Time) time.Duration {
	poll := diskPoll
	if !l.diskLow() {
		poll = quotaWait
	}
	l.diskWait.Until = now.Add(poll)
	return poll
}

// pauseForDisk makes the loop start nothing until the project's file
// system has space again, saying so once.
func (l *loop) pauseForDisk(cause error) {
	full := memory.DiskFull(l.o.Root, cause)
	if l.diskWait == nil {
		l.diskDir = full.Dir
	}
	poll := diskPoll
	if !l.diskLow() {
		poll = quotaWait
	}
	until := time.Now().Add(poll)
	if l.diskWait != nil {
		if until.After(l.diskWait.Until) {
			l.diskWait.Until = until
		}
		return
	}
	note := "waiting for space: " + full.Error()
	l.diskWait = &memory.Wait{Reason: memory.WaitDiskFull, Until: until, Text: note}
	l.m.HoldFor(l.diskWait)
	l.emit(event.Event{Type: event.LimitWait, State: memory.WaitDiskFull, Text: note})
	l.save(memory.StatusRunning, "")
}

// diskLow reports whether the file system a full disk stopped the loop
// on (the failed file's, which may not be the project's) is still full.
func (l *loop) diskLow() bool {
	if l.diskDir != "" {
		return memory.DiskLow(l.diskDir)
	}
	return memory.DiskLow(l.o.Root)
}

// holdDisk looks at the full-disk wait, if any, before a boundary: it
// ends it when there is space, putting back what the full disk held.
func (l *loop) holdDisk() {
	if l.diskWait != nil {
		l.holdForDisk(time.Now())
	}
}

// holdForDisk is hold's part for a disk wait: how long until the loop
// looks again, or 0 when there is space and the wait is over.
func (l *loop) holdForDisk(now time.Time) time.Duration {
	w := l.diskWait
	if now.Before(w.Until) {
		return w.Until.Sub(now)
	}
	if l.diskLow() {
		w.Until = now.Add(diskPoll)
		return diskPoll
	}
	// Tasks done whose mark the full disk kept out of the task file are
	// marked now, and tasks that could not be put back to open are put
	// back.
	if l.markUnmarked() {
		return l.lookAgain(now)
	}
	for _, id := range l.reopen {
		if _, err := l.updateTasks(nil, func(f *planfile.TaskFile) error { return f.SetState(id, planfile.TaskOpen) }); memory.IsDiskFull(err) {
			return l.lookAgain(now)
		}
	}
	l.reopen = nil
	l.diskWait = nil
	l.m.Lift()
	note := "there is space again on the project's file system; going on"
	l.emit(event.Event{Type: event.LimitWait, State: memory.WaitDiskFull, Text: note})
	l.decide(memory.DecisionRecord{Kind: "limit_wait_over", Detail: note, Reason: "the project's file system has more than " + text.Size(memory.LowSpace) + " free"})
	l.diskErr, l.diskRecovered = nil, true
	l.save(memory.StatusRunning, "")
	return 0
}
