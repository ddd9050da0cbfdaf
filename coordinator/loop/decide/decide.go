// Package decide holds the task loop's decisions: which ready task starts
// next and how many may run, how a failed attempt settles (retry, fail,
// abort) and when it may be retried, when the loop stops, and the circuit
// breaker. It does no I/O and reads no clock: the time is passed in. So
// the same code decides for the local loop (loop.Run) and for
// the loop as a Temporal workflow (ralph-temporal), where every decision
// must be deterministic to be replayed.
package decide

import (
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// Error policies for a failed attempt.
const (
	OnErrorRetry = "retry"
	OnErrorSkip  = "skip"
	OnErrorAbort = "abort"
)

// Loop end reasons.
const (
	ReasonAllDone       = "all tasks done"
	ReasonSomeFailed    = "no task left to work, some failed"
	ReasonUntil         = "stop condition met"
	ReasonMaxIterations = "max iterations reached"
	ReasonMaxCost       = "cost limit reached"
	ReasonBreaker       = "circuit breaker tripped"
	ReasonAborted       = "aborted after a failed task"
	ReasonInterrupted   = "interrupted"
	ReasonStuck         = "no runnable task left"
)

// Defaults of a Policy's zero fields.
const (
	DefaultMaxIterations   = 100
	DefaultBackoff         = 2 * time.Second
	DefaultBreakerCooldown = 5 * time.Minute
)

// Policy is the part of a run's configuration the decisions follow. Its
// zero fields take the defaults (WithDefaults).
type Policy struct {
	// MaxIterations bounds task attempts (default 100).
	MaxIterations int
	// Parallel is how many independent tasks are worked at once (default 1).
	Parallel int
	// OnError decides what a failed attempt leads to: retry (the default)
	// until Retries more attempts failed, then mark the task failed; skip
	// marks it failed at once; abort stops the loop.
	OnError string
	Retries int
	// Backoff is the wait before a task's first retry; it doubles after.
	Backoff time.Duration
	// BreakerCooldown is how long an open circuit breaker waits before it
	// lets one task through (default DefaultBreakerCooldown).
	BreakerCooldown time.Duration
}

// NewPolicy is the policy of a run's configuration, as `ralph run`'s
// flags and config settle it and as the workflow on Temporal receives
// it: the one mapping from the one to the other, for the local loop and
// the workflow alike. backoff is the wait before a first retry, which
// the configuration does not hold; zero fields stay zero (WithDefaults).
func NewPolicy(rc memory.RunConfig, backoff time.Duration) Policy {
	return Policy{MaxIterations: rc.MaxIterations, Parallel: rc.Parallel, OnError: rc.OnError, Retries: rc.Retries,
		Backoff: backoff, BreakerCooldown: time.Duration(rc.BreakerCooldown)}
}

// WithDefaults fills the zero fields with the defaults.
func (p Policy) WithDefaults() Policy {
	if p.MaxIterations <= 0 {
		p.MaxIterations = DefaultMaxIterations
	}
	if p.Parallel <= 0 {
		p.Parallel = 1
	}
	if p.OnError == "" {
		p.OnError = OnErrorRetry
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultBackoff
	}
	if p.BreakerCooldown <= 0 {
		p.BreakerCooldown = DefaultBreakerCooldown
	}
	return p
}

// Backoff is the rule for a task waiting out the backoff after a failed
// attempt: it is not ready before its NotBefore. Holds is asked of each
// task that is otherwise ready (by the task file's rule, those running
// left out), and Wait is then how long until the first held one may start
// (0 when none waits). It filters while the task file picks, so that the
// file builds only the tasks that are started or named, not every ready
// one of a long plan.
type Backoff struct {
	NotBefore map[string]time.Time
	Now       time.Time
	Wait      time.Duration
}

// Holds reports whether task id is still backing off.
func (b *Backoff) Holds(id string) bool {
	nb, ok := b.NotBefore[id]
	if !ok || !nb.After(b.Now) {
		return false
	}
	if w := nb.Sub(b.Now); b.Wait == 0 || w < b.Wait {
		b.Wait = w
	}
	return true
}

// CanStart reports whether one more task may start: fewer than parallel
// are in flight and the attempts begun and in flight leave room under
// MaxIterations.
func (p Policy) CanStart(inflight, parallel, iterations int) bool {
	return inflight < parallel && iterations+inflight < p.MaxIterations
}

// Settlement is what a failed attempt leads to.
type Settlement struct {
	// Next is the task's new state: open to be retried, or failed.
	Next planfile.TaskState
	// NotBefore is when a task going back to open may be retried, Backoff
	// after the failure.
	NotBefore time.Time
	Backoff   time.Duration
	// Abort: the loop stops (--on-error abort).
	Abort bool
}

// SettleFailure decides a failed attempt: attempt is its number, waived
// how many of the task's attempts a limit cut short (they spend no
// retry), final whether the failure cannot be retried (a merge conflict).
// A retry waits Backoff, doubled for every attempt before.
func (p Policy) SettleFailure(attempt, waived int, final bool, now time.Time) Settlement {
	s := Settlement{Next: planfile.TaskFailed, Abort: p.OnError == OnErrorAbort}
	if p.OnError == OnErrorRetry && attempt-waived <= p.Retries && !final {
		s.Next, s.Backoff = planfile.TaskOpen, p.Backoff<<(attempt-1)
		s.NotBefore = now.Add(s.Backoff)
	}
	return s
}

// Streak is the run of attempts that completed no task, which the breaker
// condition sees as no_progress and same_error_repeats.
type Streak struct {
	NoProgress       int
	SameErrorRepeats int
	LastErr          string
}

// Succeeded is the streak after a task was done: none.
func (Streak) Succeeded() Streak { return Streak{} }

// Failed is the streak after an attempt failed with failure.
func (s Streak) Failed(failure string) Streak {
	s.NoProgress++
	if failure == s.LastErr {
		s.SameErrorRepeats++
	} else {
		s.SameErrorRepeats, s.LastErr = 1, failure
	}
	return s
}

// OutOfIterations reports whether the loop stops at MaxIterations: every
// attempt allowed has been made, none runs, and tasks are still open.
func (p Policy) OutOfIterations(iterations, running, open int) bool {
	return iterations >= p.MaxIterations && running == 0 && open > 0
}

// CostSpent reports whether the known cost reached the limit (0: none)
// while work is left: a budget spent by the last task stops nothing, and
// the loop ends on the tasks' account (Final).
func CostSpent(cost, max float64, open, running int) bool {
	return max > 0 && cost >= max && (open > 0 || running > 0)
}

// Final is why a loop with nothing left to start and nothing running
// ends, and whether that is an error: all done, no task left but some
// failed, or stuck on tasks whose dependencies are not done.
func Final(c memory.TaskCounts, failedThisRun int) (reason string, isError bool) {
	switch {
	case c.Open == 0 && c.InProgress == 0 && (c.Failed > 0 || failedThisRun > 0):
		return ReasonSomeFailed, true
	case c.Open == 0 && c.InProgress == 0:
		return ReasonAllDone, false
	}
	return ReasonStuck, true
}
