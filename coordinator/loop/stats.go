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
	l.keep(l.o.Store.SaveState(func(s *memory.State) { s.Pausing = want }))
}
