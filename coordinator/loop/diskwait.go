package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// A full disk stops every attempt the same way — git cannot write a
// checkpoint, ralph its records, the model's tools their files — until
// someone frees space. An unattended run must not spend its attempts and
// trip its breaker on that, so an attempt that failed while the project's
// file system was full (or on an error that says so) is treated like a
// rate limit: the task goes back to open, the attempt is not counted, the
// loop says once why it waits (session.json's wait, a limit_wait event, a
// notification) and starts nothing until there is room again. The
// machine decides all of that (machine/space.go); this file is the
// host's part, what only it can: see the disk, and put back what a full
// disk held.

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

// fullDisk is what the host tells the machine of a full disk that
// cause says (or that the project's file system shows): which write
// failed, and how soon it is worth looking again. The first full disk
// of a wait names the file system the wait watches.
func (l *loop) fullDisk(cause error) machine.DiskFull {
	full := memory.DiskFull(l.o.Root, cause)
	if w := l.m.Wait(); w == nil || w.Reason != memory.WaitDiskFull {
		l.diskDir = full.Dir
	}
	return machine.DiskFull{Err: full.Error(), Again: l.poll()}
}

// pauseForDisk tells the machine that a write failed for want of space,
// and carries out what it decides: no task starts until there is space.
func (l *loop) pauseForDisk(cause error) {
	h := &host{l: l, ctx: context.Background()}
	_, _ = h.carry(l.m.DiskFull(time.Now(), l.fullDisk(cause)), l.file)
}

// noDiskWait ends the loop on a task file a full disk kept from being
// written, when the person's --max-wait 0 says it never waits.
func (l *loop) noDiskWait(err error) Result {
	return Result{Reason: "cannot update the task file", IsError: true,
		Err: fmt.Errorf("%w (ralph does not wait with --max-wait 0)", memory.ExplainDiskFull(err, l.o.Root))}
}

// poll is how long until the loop looks at the disk again: a second when
// the file system shows itself full, a minute when it shows space (a
// quota).
func (l *loop) poll() time.Duration {
	if l.diskLow() {
		return diskPoll
	}
	return quotaWait
}

// diskLow reports whether the file system a full disk stopped the loop
// on (the failed file's, which may not be the project's) is still full.
func (l *loop) diskLow() bool {
	if l.diskDir != "" {
		return memory.DiskLow(l.diskDir)
	}
	return memory.DiskLow(l.o.Root)
}

// lookForSpace carries out the machine's Look: whether there is space
// again, and if so it puts back what the full disk held (tasks done whose
// mark it kept out of the task file are marked, tasks it kept from going
// back to open go back). It reports whether the wait may end, or how long
// until the loop looks again.
func (l *loop) lookForSpace() (bool, time.Duration) {
	if l.diskLow() {
		return false, diskPoll
	}
	if l.markUnmarked() {
		return false, l.poll()
	}
	for _, id := range l.reopen {
		if _, err := l.updateTasks(nil, func(f *planfile.TaskFile) error { return f.SetState(id, planfile.TaskOpen) }); memory.IsDiskFull(err) {
			return false, l.poll()
		}
	}
	l.reopen = nil
	l.diskErr, l.diskRecovered = nil, true
	return true, 0
}
