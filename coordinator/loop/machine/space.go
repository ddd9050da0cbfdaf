package machine

import (
	"fmt"
	"github.com/ralph-dev/ralph/coordinator/event"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// A full disk stops every attempt the same way until someone frees
// space, so the loop waits for it as for a limit: the task goes back to
// open, the attempt is not counted, the loop says once why it waits and
// starts nothing until there is room. Only the host can see the disk, so
// it reports what it saw (DiskFull, an Outcome's OnFullDisk, Space) and
// the machine decides: when to wait, when to look again (a Look effect)
// and when the wait is over, each said the same way whichever host runs
// it.

// DiskFull is a full disk a host ran into.
type DiskFull struct {
	// Err says which write failed and where, in one sentence.
	Err string
	// Again is how long until it is worth looking at the disk again: a
	// moment where the file system shows itself full, longer where it
	// shows space (a quota, which statfs does not see).
	Again time.Duration
}

// OnFullDisk is o cut short by a full disk: the machine waits for space
// rather than spend a retry, unless --max-wait 0 says it never waits.
func (o Outcome) OnFullDisk(full DiskFull) Outcome {
	o.DiskFull = &full
	o.LastTry = LastTry{}
	return o
}

// DiskFull is the input of a write the host could not make for want of
// space (a session save, the task file, a task's mark): no task starts
// until there is space again.
func (m *Machine) DiskFull(now time.Time, full DiskFull) Step {
	m.now = now
	var s Step
	m.waitForDisk(now, full, &s)
	return s
}

// Space is the host's answer to a Look: there is space again, and what
// the full disk held is put back; or there is not, and the host looks
// again after again.
func (m *Machine) Space(now time.Time, free bool, again time.Duration) Step {
	m.now = now
	var s Step
	if !m.waitingForSpace() {
		return s
	}
	if !free {
		m.wait.Until = now.Add(again)
		return s
	}
	m.wait = nil
	note := "there is space again on the project's file system; going on"
	s.emit(event.Event{Type: event.LimitWait, State: memory.WaitDiskFull, Text: note})
	m.record(&s, memory.DecisionRecord{Kind: "limit_wait_over", Detail: note,
		Reason: "the project's file system has more than " + text.Size(memory.LowSpace) + " free"})
	s.save(memory.StatusRunning, "")
	return s
}

// waitingForSpace reports whether the loop waits for a full disk.
func (m *Machine) waitingForSpace() bool {
	return m.wait != nil && m.wait.Reason == memory.WaitDiskFull
}

// holdForSpace is hold's part for a full disk: how long until the host
// looks again, or, once that time has come, a Look and a moment's hold
// while the host answers it.
func (m *Machine) holdForSpace(now time.Time, s *Step) time.Duration {
	if now.Before(m.wait.Until) {
		return m.wait.Until.Sub(now)
	}
	s.add(Effect{Kind: Look})
	return time.Millisecond
}

// waitForDisk starts the wait for space, saying so once, or moves a wait
// already on to look no sooner than full.Again from now.
func (m *Machine) waitForDisk(now time.Time, full DiskFull, s *Step) {
	until := now.Add(full.Again)
	if m.waitingForSpace() {
		if until.After(m.wait.Until) {
			m.wait.Until = until
		}
		return
	}
	note := "waiting for space: " + full.Err
	m.wait = &memory.Wait{Reason: memory.WaitDiskFull, Until: until, Text: note}
	s.emit(event.Event{Type: event.LimitWait, State: memory.WaitDiskFull, Text: note})
	s.save(memory.StatusRunning, "")
}

// waitForSpace handles an attempt a full disk cut short, as waitForLimit
// one a limit cut short: the task goes back to open, the attempt counts
// neither as an iteration nor against the task's retries, and no task
// starts before there is space. It reports waiting, or the failure when
// --max-wait 0 says the loop never waits and the attempt fails as any
// other.
func (m *Machine) waitForSpace(now time.Time, o Outcome, s *Step) (string, bool) {
	full := o.DiskFull
	if m.cfg.MaxWait <= 0 {
		return full.Err + " (ralph does not wait with --max-wait 0)", false
	}
	id := o.Task.ID
	s.add(Effect{Kind: Commit, Task: o.Task, Attempt: o.Attempt, State: planfile.TaskOpen, Cause: DiskCut})
	m.waived[id]++
	m.iterations--
	s.emit(ended(o, planfile.TaskOpen, full.Err))
	m.waitForDisk(now, *full, s)
	m.record(s, memory.DecisionRecord{Kind: "limit_wait", Task: id, Detail: id + " goes back to open; " + m.wait.Text,
		Reason: fmt.Sprintf("attempt %d failed on a full disk: %s; no attempt can succeed before there is space, so waiting spends no retry",
			o.Attempt, text.Clip(full.Err, 300))})
	s.save(memory.StatusRunning, "")
	return "", true
}
