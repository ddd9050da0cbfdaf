package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// The circuit breaker (--breaker, default DefaultBreaker) trips when its
// condition holds after a failed attempt. With a person at the terminal
// (LoopOptions.Ask) it asks whether to go on, as it always did. Without
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
const DefaultBreakerCooldown = 5 * time.Minute

// breakerState is the breaker of one loop; the zero value is closed.
type breakerState struct {
	state    string // memory.BreakerOpen or BreakerHalfOpen; "" is closed
	until    time.Time
	cooldown time.Duration // of the current or next opening
	trips    int
	probe    string // the task the half-open breaker let through
}

// record is the breaker for session.json: nil while it is closed and
// never tripped.
func (b breakerState) record() *memory.Breaker {
	if b.trips == 0 {
		return nil
	}
	state := b.state
	if state == "" {
		state = memory.BreakerClosed
	}
	return &memory.Breaker{State: state, Until: b.until, Cooldown: memory.Duration(b.cooldown), Trips: b.trips}
}

// parallel is how many tasks may run at once now: one while half-open.
func (l *loop) parallel() int {
	if l.breaker.state == memory.BreakerHalfOpen {
		return 1
	}
	return l.o.Parallel
}

// started notes the task a half-open breaker lets through.
func (b *breakerState) started(id string) {
	if b.state == memory.BreakerHalfOpen && b.probe == "" {
		b.probe = id
	}
}

// breakerHold is how long an open breaker keeps tasks from starting; once
// its cooldown has passed it goes half-open.
func (l *loop) breakerHold(now time.Time) time.Duration {
	b := &l.breaker
	if b.probe != "" && !l.running[b.probe] {
		// The probe ended without a verdict (a limit, a stop): the next
		// task is the probe.
		b.probe = ""
	}
	switch {
	case b.state == memory.BreakerHalfOpen && b.probe != "":
		// The probe runs alone; nothing else starts until its end wakes
		// the loop.
		return time.Hour
	case b.state != memory.BreakerOpen:
		return 0
	case now.Before(b.until):
		return b.until.Sub(now)
	}
	b.state, b.until, b.probe = memory.BreakerHalfOpen, time.Time{}, ""
	l.breakerChanged("breaker_half_open", "open → half-open: the cooldown is over; one task runs alone to see whether the trouble has passed",
		"open → half-open: one task runs alone", fmt.Sprintf("the cooldown of %s is over; one task shows whether the trouble has passed before all run again", b.cooldown))
	return 0
}

// breakerSucceeded closes a half-open breaker whose probe succeeded.
func (l *loop) breakerSucceeded(id string) {
	b := &l.breaker
	if b.state != memory.BreakerHalfOpen || b.probe != id {
		return
	}
	b.state, b.probe, b.cooldown = "", "", l.o.BreakerCooldown
	l.breakerChanged("breaker_closed", fmt.Sprintf("half-open → closed: %s succeeded; tasks run again", id),
		"half-open → closed: tasks run again", fmt.Sprintf("%s, the task the half-open breaker let through, succeeded", id))
}

// breakerFailed judges a failed attempt: a half-open breaker's probe
// opens it again for twice as long; otherwise the condition is evaluated
// and, when it holds, the person is asked (Ask) or the breaker opens. It
// reports whether the loop must stop.
func (l *loop) breakerFailed(ctx context.Context, id, failure string) (LoopResult, bool) {
	b := &l.breaker
	switch {
	case b.state == memory.BreakerHalfOpen && b.probe == id:
		b.cooldown *= 2
		l.openBreaker("half-open → open", fmt.Sprintf("%s failed again (%s); the cooldown doubles to %s", id, text.Clip(failure, 200), b.cooldown))
		return LoopResult{}, false
	case b.state != "":
		return LoopResult{}, false // open, or half-open with a task from before: the probe decides
	}
	l.refreshStats()
	trip, err := l.o.Breaker(l.stats)
	if err == nil && !trip {
		return LoopResult{}, false
	}
	why := fmt.Sprintf("%d attempts in a row completed no task; last error: %s", l.stats.NoProgress, text.Clip(failure, 200))
	if err != nil {
		why = "the breaker condition failed: " + err.Error()
		l.decide(memory.DecisionRecord{Kind: "breaker", Task: id, Detail: "the loop stops", Reason: why})
		return LoopResult{Reason: ReasonBreaker, IsError: true, Err: errors.New("circuit breaker: " + why)}, true
	}
	if l.o.Ask != nil {
		question := "circuit breaker: " + why + ". Go on?"
		l.decide(memory.DecisionRecord{Kind: "breaker", Task: id, Detail: "the person is asked whether to go on", Reason: why + "; someone can be asked"})
		if l.o.Ask(ctx, question) {
			l.decide(memory.DecisionRecord{Kind: "breaker_go_on", Detail: "the loop goes on", By: memory.DecidedByPerson,
				Reason: "the person answered yes to: " + question})
			l.stats.NoProgress, l.stats.SameErrorRepeats = 0, 0
			return LoopResult{}, false
		}
		l.decide(memory.DecisionRecord{Kind: "breaker_stop", Detail: "the loop stops", By: memory.DecidedByPerson,
			Reason: "the person did not answer yes to: " + question})
		return LoopResult{Reason: ReasonBreaker, IsError: true, Err: errors.New("circuit breaker: " + why)}, true
	}
	if b.cooldown <= 0 {
		b.cooldown = l.o.BreakerCooldown
	}
	l.openBreaker("closed → open", why)
	return LoopResult{}, false
}

// openBreaker opens the breaker for its cooldown: change is the
// transition ("closed → open"), why the reason.
func (l *loop) openBreaker(change, why string) {
	b := &l.breaker
	now := time.Now()
	b.state, b.until, b.probe = memory.BreakerOpen, now.Add(b.cooldown), ""
	b.trips++
	l.breakerChanged("breaker_open", fmt.Sprintf("%s: %s; one task runs at %s (cooldown %s)", change, why, text.Clock(b.until, now), b.cooldown),
		fmt.Sprintf("%s: no task starts until %s (cooldown %s)", change, b.until.UTC().Format(time.RFC3339), b.cooldown),
		why+"; nobody can be asked whether to go on, so the loop waits before it tries one task again")
}

// breakerChanged records a change of state: decisions.jsonl (what
// changed and why), the event (text, as faces show it) and session.json.
func (l *loop) breakerChanged(kind, text, detail, reason string) {
	l.decide(memory.DecisionRecord{Kind: kind, Detail: detail, Reason: reason})
	state := l.breaker.state
	if state == "" {
		state = memory.BreakerClosed
	}
	l.emit(Event{Type: EventBreaker, State: state, Until: l.breaker.until, Text: "circuit breaker " + text, IsError: state == memory.BreakerOpen})
	l.save(memory.StatusRunning, "")
}
