package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// Stats are the figures user-written conditions see (--until, the
// circuit breaker, quality gates); the task-loop machine keeps them.
type Stats = machine.Stats

// Condition is a compiled user condition over Stats.
type Condition = machine.Condition

// refreshCounts reads the task file's counts into the stats.
func (l *loop) refreshCounts() {
	if f, err := l.o.Tasks.Load(); err == nil {
		c := f.Counts()
		l.counts = c
		l.stats.TasksOpen, l.stats.TasksDone, l.stats.TasksFailed = c.Open+c.InProgress, c.Done, c.Failed
	}
}

func (l *loop) refreshStats() {
	l.refreshCounts()
	l.stats.Tokens = l.usage.InputTokens + l.usage.OutputTokens
	l.stats.CostUSD = l.cost
	l.stats.ElapsedS = time.Since(l.start).Seconds()
	if l.stats.Iterations > 0 {
		l.stats.ErrorRate = float64(l.stats.Errors) / float64(l.stats.Iterations)
	}
}

// checkLimits evaluates the stop conditions at a boundary.
func (l *loop) checkLimits(ctx context.Context) (Result, bool) {
	l.refreshStats()
	if l.o.Until != nil {
		ok, err := l.o.Until(l.stats)
		if err != nil {
			return Result{Reason: "the --until condition failed", IsError: true, Err: err}, true
		}
		if ok {
			return Result{Reason: ReasonUntil, IsError: len(l.failed) > 0}, true
		}
	}
	// A budget spent by the last task stops nothing: with no task left the
	// loop ends on the tasks' account (finalReason), not the budget's.
	if decide.CostSpent(l.cost, l.o.MaxCost, l.stats.TasksOpen, len(l.running)) {
		// The budget is spent: with a person at the terminal, pause and ask
		// whether to spend as much again; otherwise stop.
		stop := memory.DecisionRecord{Kind: "budget_stop", Detail: "the loop stops at the cost limit",
			Reason: fmt.Sprintf("the known cost %s reached --max-cost %s and nobody can be asked to raise it", text.Dollars(l.cost), text.Dollars(l.o.MaxCost))}
		if l.o.Ask != nil {
			question := fmt.Sprintf("the cost limit of %s is reached (%s spent). Allow another %s?", text.Dollars(l.o.MaxCost), text.Dollars(l.cost), text.Dollars(l.o.MaxCost))
			if l.o.Ask(ctx, question) {
				l.decide(memory.DecisionRecord{Kind: "budget_raised", Detail: fmt.Sprintf("the cost limit goes from %s to %s", text.Dollars(l.o.MaxCost), text.Dollars(2*l.o.MaxCost)),
					By: memory.DecidedByPerson, Reason: "the person answered yes to: " + question})
				l.o.MaxCost *= 2
				return Result{}, false
			}
			stop.By, stop.Reason = memory.DecidedByPerson, "the person did not answer yes to: "+question
		}
		l.decide(stop)
		return Result{Reason: ReasonMaxCost, IsError: true, Err: coordinator.CostLimitError(l.o.MaxCost, l.cost)}, true
	}
	// The counts are those refreshStats read at the top: nothing since
	// has changed the task file.
	if l.o.Policy.OutOfIterations(l.stats.Iterations, len(l.running), l.stats.TasksOpen) {
		return Result{Reason: ReasonMaxIterations, IsError: true, Err: fmt.Errorf("stopped after %s with %s open; raise --max-iterations", text.Counted(l.o.MaxIterations, "iteration", "iterations"), text.Counted(l.stats.TasksOpen, "task", "tasks"))}, true
	}
	return Result{}, false
}

// finalReason is why a loop with nothing left to start ends.
func (l *loop) finalReason(f *memory.TaskFile) Result {
	c := f.Counts()
	if reason, isError := decide.Final(c, len(l.failed)); reason != ReasonStuck {
		return Result{Reason: reason, IsError: isError}
	}
	return Result{Reason: ReasonStuck, IsError: true,
		Err: fmt.Errorf("%s cannot start: %s not done (see ralph status)", text.Counted(c.Open, "open task", "open tasks"), text.Plural(c.Open, "its dependencies are", "their dependencies are"))}
}

func (l *loop) save(status, current string) {
	if l.o.Store == nil {
		return
	}
	l.refreshStats()
	l.keep(l.o.Store.SaveState(func(s *memory.State) {
		s.Status, s.Mode = status, "run"
		s.Iteration = l.stats.Iterations
		s.Turns = l.turns
		s.Usage = l.usage
		s.Errors = l.stats.Errors
		if l.cost > 0 {
			c := l.cost
			s.CostUSD = &c
		}
		s.CurrentTask = current
		s.Pausing = l.pausing && status == memory.StatusRunning
		s.Tasks = l.counts
		s.Wait, s.Breaker = l.wait, l.breaker.Record()
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

// addUsage counts what an attempt spent.
func (l *loop) addUsage(out Outcome) {
	l.usage = l.usage.Add(out.Usage)
	l.turns += out.Turns
	if out.CostUSD != nil {
		l.cost = text.RoundUSD(l.cost + *out.CostUSD)
	}
}

func (l *loop) streak() decide.Streak {
	return decide.Streak{NoProgress: l.stats.NoProgress, SameErrorRepeats: l.stats.SameErrorRepeats, LastErr: l.lastErr}
}

func (l *loop) setStreak(s decide.Streak) {
	l.stats.NoProgress, l.stats.SameErrorRepeats, l.lastErr = s.NoProgress, s.SameErrorRepeats, s.LastErr
}
