package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// The circuit breaker (--breaker, default DefaultBreaker) trips when its
// condition holds after a failed attempt. With a person at the terminal
// (Options.Ask) it asks whether to go on, as it always did. Without
// one it has three states, as breakers in services do:
//
//   - closed: tasks run;
//   - open: it tripped; no task starts for the cooldown
//     (--breaker-cooldown, default 5 min), tasks already running finish;
//   - half-open: the cooldown passed; one task runs alone. Its success
//     closes the breaker (and the cooldown is back to its first length),
//     its failure opens it again for twice as long.
//
// Every change is a decision in decisions.jsonl (breaker_open,
// breaker_half_open, breaker_closed), a breaker event and the session's
// breaker field, which ralph status shows. The loop still ends at
// --max-iterations, so a task that never succeeds cannot keep it alive
// forever.

// DefaultBreakerCooldown is how long a tripped breaker stays open the
// first time when nobody can be asked.
const DefaultBreakerCooldown = decide.DefaultBreakerCooldown

// parallel is how many tasks may run at once now: one while half-open.
func (l *loop) parallel() int { return l.breaker.Parallel(l.o.Parallel) }

// breakerHold is how long an open breaker keeps tasks from starting; once
// its cooldown has passed it goes half-open.
func (l *loop) breakerHold(now time.Time) time.Duration {
	hold, halfOpened := l.breaker.Hold(now, l.isRunning)
	if halfOpened {
		l.breakerChanged("breaker_half_open", "open → half-open: the cooldown is over; one task runs alone to see whether the trouble has passed",
			"open → half-open: one task runs alone", fmt.Sprintf("the cooldown of %s is over; one task shows whether the trouble has passed before all run again", l.breaker.Cooldown))
	}
	return hold
}

// breakerSucceeded closes a half-open breaker whose probe succeeded.
func (l *loop) breakerSucceeded(id string) {
	if l.breaker.Succeeded(id, l.o.BreakerCooldown) {
		l.breakerChanged("breaker_closed", fmt.Sprintf("half-open → closed: %s succeeded; tasks run again", id),
			"half-open → closed: tasks run again", fmt.Sprintf("%s, the task the half-open breaker let through, succeeded", id))
	}
}

// breakerFailed judges a failed attempt: a half-open breaker's probe
// opens it again for twice as long; otherwise the condition is evaluated
// and, when it holds, the person is asked (Ask) or the breaker opens. It
// reports whether the loop must stop.
func (l *loop) breakerFailed(ctx context.Context, id, failure string) (Result, bool) {
	b := &l.breaker
	switch b.Failed(id) {
	case decide.Reopen:
		l.openBreaker("half-open → open", fmt.Sprintf("%s failed again (%s); the cooldown doubles to %s", id, text.Clip(failure, 200), b.Cooldown))
		return Result{}, false
	case decide.Ignore:
		return Result{}, false // open, or half-open with a task from before: the probe decides
	}
	if l.nothingLeft() {
		// No task can start again (every one done, failed or blocked):
		// the loop ends now, and there is nothing to ask about or to
		// wait out a cooldown for.
		return Result{}, false
	}
	l.refreshStats()
	trip, err := l.o.Breaker(l.stats)
	if err == nil && !trip {
		return Result{}, false
	}
	why := fmt.Sprintf("%s in a row completed no task; last error: %s", text.Counted(l.stats.NoProgress, "attempt", "attempts"), text.Clip(failure, 200))
	if err != nil {
		why = "the breaker condition failed: " + err.Error()
		l.decide(memory.DecisionRecord{Kind: "breaker", Task: id, Detail: "the loop stops", Reason: why})
		return Result{Reason: ReasonBreaker, IsError: true, Err: errors.New("circuit breaker: " + why)}, true
	}
	if l.o.Ask != nil {
		question := "circuit breaker: " + why + ". Go on?"
		l.decide(memory.DecisionRecord{Kind: "breaker", Task: id, Detail: "the person is asked whether to go on", Reason: why + "; someone can be asked"})
		if l.o.Ask(ctx, question) {
			l.decide(memory.DecisionRecord{Kind: "breaker_go_on", Detail: "the loop goes on", By: memory.DecidedByPerson,
				Reason: "the person answered yes to: " + question})
			l.stats.NoProgress, l.stats.SameErrorRepeats = 0, 0
			return Result{}, false
		}
		l.decide(memory.DecisionRecord{Kind: "breaker_stop", Detail: "the loop stops", By: memory.DecidedByPerson,
			Reason: "the person did not answer yes to: " + question})
		return Result{Reason: ReasonBreaker, IsError: true, Err: errors.New("circuit breaker: " + why)}, true
	}
	l.openBreaker("closed → open", why)
	return Result{}, false
}

// openBreaker opens the breaker for its cooldown: change is the
// transition ("closed → open"), why the reason.
func (l *loop) openBreaker(change, why string) {
	b := &l.breaker
	now := time.Now()
	b.Open(now, l.o.BreakerCooldown)
	l.breakerChanged("breaker_open", fmt.Sprintf("%s: %s; one task runs at %s (cooldown %s)", change, why, text.Clock(b.Until, now), b.Cooldown),
		fmt.Sprintf("%s: no task starts until %s (cooldown %s)", change, b.Until.UTC().Format(time.RFC3339), b.Cooldown),
		why+"; nobody can be asked whether to go on, so the loop waits before it tries one task again")
}

// breakerChanged records a change of state: decisions.jsonl (what
// changed and why), the event (text, as faces show it) and session.json.
func (l *loop) breakerChanged(kind, text, detail, reason string) {
	l.decide(memory.DecisionRecord{Kind: kind, Detail: detail, Reason: reason})
	state := l.breaker.Name()
	l.emit(coordinator.Event{Type: coordinator.EventBreaker, State: state, Until: l.breaker.Until, Text: "circuit breaker " + text, IsError: state == memory.BreakerOpen})
	l.save(memory.StatusRunning, "")
}

// nothingLeft reports whether no task could start again: none is in
// flight, none is ready and none is backing off before a retry.
func (l *loop) nothingLeft() bool {
	if len(l.running) > 0 {
		return false
	}
	f, err := l.o.Tasks.Load()
	if err != nil {
		return false
	}
	ready, wait := l.ready(f)
	return len(ready) == 0 && wait == 0
}
