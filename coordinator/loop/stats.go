package loop

import (
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
)

// Stats are the figures user-written conditions see (--until, the
// circuit breaker, quality gates); the task-loop machine keeps them.
type Stats = machine.Stats

// Condition is a compiled user condition over Stats.
type Condition = machine.Condition

// refreshCounts reads the task file's counts, for the session's record
// and the result.
func (l *loop) refreshCounts() {
	if f, err := l.o.Tasks.Load(); err == nil {
		l.counts = f.Counts()
		l.file = f
	}
}

// stats are the machine's figures with the task file's counts now.
func (l *loop) stats() Stats {
	l.refreshCounts()
	return l.m.Stats(time.Now(), l.file)
}

func (l *loop) save(status, current string) {
	// This save holds everything a pending one would.
	l.pending = nil
	if l.o.Store == nil {
		return
	}
	l.refreshCounts()
	m := l.m
	l.keep(l.o.Store.SaveState(func(s *memory.State) {
		s.Status, s.Mode = status, "run"
		s.Iteration = m.Iterations()
		s.Turns = m.Turns()
		s.Usage = m.Usage()
		s.Errors = m.Errors()
		if c := m.Cost(); c > 0 {
			s.CostUSD = &c
		}
		s.CurrentTask = current
		s.Pausing = l.pausing && status == memory.StatusRunning
		s.Tasks = l.counts
		// A loop that ended waits for nothing, and its breaker is
		// history (decisions.jsonl keeps it).
		s.Wait, s.Breaker = nil, nil
		if !l.over {
			b := m.Breaker()
			s.Wait, s.Breaker = m.Wait(), b.Record()
		}
		if status != memory.StatusRunning {
			s.EndedAt = time.Now().UTC()
		}
	}))
}

// pendingSave is a save of the machine's that waits for flushSave.
type pendingSave struct{ status, current string }

// flushSave makes the save the machine asked for last, if it is still
// pending. The machine asks for one when a task ends and again when the
// next starts, a moment later; writing the state (two files, one of them
// synced) once for both halves what a long run's tasks spend on it. A
// crash in between leaves the state of the task before, as a crash just
// before the end's save always could: the task file and the logs say
// what ended.
func (l *loop) flushSave() {
	if p := l.pending; p != nil {
		l.save(p.status, p.current)
	}
}

// markPausing records, as soon as the loop sees it, that it was paused
// while tasks are in flight: the session stays running until they finish,
// and says it is pausing so status and watch do not show a plain "running"
// for as long as a task takes. A paused loop with nothing in flight saves
// "paused" next, which clears it.
func (l *loop) markPausing(paused bool, inflight int) {
	want := paused && inflight > 0
	if want == l.pausing {
		return
	}
	l.pausing = want
	if l.o.Store == nil || (paused && !want) {
		return
	}
	l.flushSave()
	l.keep(l.o.Store.SaveState(func(s *memory.State) { s.Pausing = want }))
}
