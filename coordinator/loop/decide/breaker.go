package decide

import (
	"time"

	"github.com/ralph-dev/ralph/memory"
)

// Breaker is the circuit breaker of one loop when nobody can be asked;
// the zero value is closed. It has three states, as breakers in services
// do:
//
//   - closed: tasks run;
//   - open: it tripped; no task starts until Until, tasks already running
//     finish;
//   - half-open: the cooldown passed; one task (the probe) runs alone. Its
//     success closes the breaker and the cooldown is back to its first
//     length; its failure opens it again for twice as long.
//
// The methods only change the state; the caller says so (decisions,
// events, the session record).
type Breaker struct {
	State    string // memory.BreakerOpen or BreakerHalfOpen; "" is closed
	Until    time.Time
	Cooldown time.Duration // of the current or next opening
	Trips    int
	Probe    string // the task the half-open breaker let through
}

// Record is the breaker for session.json: nil while it is closed and
// never tripped.
func (b Breaker) Record() *memory.Breaker {
	if b.Trips == 0 {
		return nil
	}
	return &memory.Breaker{State: b.Name(), Until: b.Until, Cooldown: memory.Duration(b.Cooldown), Trips: b.Trips}
}

// Name is the state as the session record and events spell it.
func (b Breaker) Name() string {
	if b.State == "" {
		return memory.BreakerClosed
	}
	return b.State
}

// Parallel is how many tasks may run at once: one while half-open.
func (b Breaker) Parallel(parallel int) int {
	if b.State == memory.BreakerHalfOpen {
		return 1
	}
	return parallel
}

// Started notes the task a half-open breaker lets through.
func (b *Breaker) Started(id string) {
	if b.State == memory.BreakerHalfOpen && b.Probe == "" {
		b.Probe = id
	}
}

// Hold is how long the breaker keeps tasks from starting from now;
// running tells whether a task is still in flight. An open breaker whose
// cooldown has passed goes half-open, and halfOpened says so.
func (b *Breaker) Hold(now time.Time, running func(id string) bool) (hold time.Duration, halfOpened bool) {
	if b.Probe != "" && !running(b.Probe) {
		// The probe ended without a verdict (a limit, a stop): the next
		// task is the probe.
		b.Probe = ""
	}
	switch {
	case b.State == memory.BreakerHalfOpen && b.Probe != "":
		// The probe runs alone; nothing else starts until its end wakes
		// the loop.
		return time.Hour, false
	case b.State != memory.BreakerOpen:
		return 0, false
	case now.Before(b.Until):
		return b.Until.Sub(now), false
	}
	b.State, b.Until, b.Probe = memory.BreakerHalfOpen, time.Time{}, ""
	return 0, true
}

// Succeeded closes a half-open breaker whose probe, id, succeeded, with
// the cooldown back to base; it reports whether it closed.
func (b *Breaker) Succeeded(id string, base time.Duration) bool {
	if b.State != memory.BreakerHalfOpen || b.Probe != id {
		return false
	}
	b.State, b.Probe, b.Cooldown = "", "", base
	return true
}

// Verdict is what a failed attempt means to the breaker.
type Verdict int

const (
	// Judge: the breaker is closed; the caller evaluates its condition
	// and calls Open when it holds.
	Judge Verdict = iota
	// Reopen: the half-open breaker's probe failed; the caller calls
	// Open, whose cooldown Failed has doubled.
	Reopen
	// Ignore: the breaker is open, or half-open and the attempt was not
	// the probe: the probe decides.
	Ignore
)

// Failed judges a failed attempt of task id.
func (b *Breaker) Failed(id string) Verdict {
	switch {
	case b.State == memory.BreakerHalfOpen && b.Probe == id:
		b.Cooldown *= 2
		return Reopen
	case b.State != "":
		return Ignore
	}
	return Judge
}

// Open opens the breaker for its cooldown (base when it has none yet).
func (b *Breaker) Open(now time.Time, base time.Duration) {
	if b.Cooldown <= 0 {
		b.Cooldown = base
	}
	b.State, b.Until, b.Probe = memory.BreakerOpen, now.Add(b.Cooldown), ""
	b.Trips++
}
