package loop

import (
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
)

// A task attempt that a rate limit (the model endpoint's 429 with a reset
// time beyond what one call waits) or an external agent's usage limit
// cut short is no failure of the task: no retry can succeed before the
// reset, and spending them, tripping the breaker and failing tasks is
// what an unattended run must not do. So the loop puts the task back to
// open without counting the attempt, starts no task until the reset time,
// says so (session.json's wait, a limit_wait event, decisions.jsonl) and
// then goes on. Tasks already running go on meanwhile; a hard stop ends
// the wait at once like any other.

// unknownLimitWait is how long the loop waits for a limit whose reset the
// agent did not name ("Try again later.") before it tries again.
const unknownLimitWait = 5 * time.Minute

// limitOf reports an attempt's error that is a rate or usage limit: when
// it resets (zero when nobody said), why the loop would wait, and what to
// call it.
func limitOf(err error) (until time.Time, reason, what string, ok bool) {
	if t, ok := llm.ResetTime(err); ok {
		return t, memory.WaitRateLimit, "the rate limit", true
	}
	var ul *agents.UsageLimitError
	if errors.As(err, &ul) {
		return ul.Until, memory.WaitUsageLimit, fmt.Sprintf("the %s usage limit", ul.Agent), true
	}
	return time.Time{}, "", "", false
}

func isLimit(err error) bool {
	_, _, _, ok := limitOf(err)
	return ok
}

// waitForLimit handles an attempt a limit cut short: the task goes back
// to open, the attempt counts neither as an iteration nor against the
// task's retries, and no task starts before the reset. It returns ""
// then, or the failure sentence when the reset is further off than
// MaxWait allows, and the attempt fails as any other.
func (l *loop) waitForLimit(d attemptDone, err error) string {
	until, reason, what, _ := limitOf(err)
	now := time.Now()
	guessed := until.IsZero()
	if guessed {
		until = now.Add(unknownLimitWait)
	}
	if l.o.MaxWait <= 0 {
		return fmt.Sprintf("%v (ralph does not wait for limits with --max-wait 0)", err)
	}
	if until.Sub(now) > l.o.MaxWait {
		return fmt.Sprintf("%s resets at %s, in %s, later than --max-wait (%s) lets ralph wait: %v",
			what, text.Clock(until, now), roundWait(until.Sub(now)), l.o.MaxWait, err)
	}
	t := d.task
	if _, uerr := l.updateTasks(&t, func(f *memory.TaskFile) error { return f.SetState(t.ID, memory.TaskOpen) }); uerr != nil &&
		!errors.Is(uerr, memory.ErrTaskNotFound) {
		l.keep(uerr)
	}
	l.waived[t.ID]++
	l.stats.Iterations--
	l.emit(attemptEnded(d, memory.TaskOpen, nil, err.Error()))
	if l.wait == nil || until.After(l.wait.Until) {
		note := "waiting for " + what + " until " + text.Clock(until, now)
		if guessed {
			note = "waiting for " + what + " (it named no reset time) until " + text.Clock(until, now)
		}
		l.wait = &memory.Wait{Reason: reason, Until: until, Text: note}
		l.emit(coordinator.Event{Type: coordinator.EventLimitWait, Text: note, Until: until})
	}
	why := fmt.Sprintf("attempt %d was stopped by %s: %s; no attempt can succeed before it resets, so waiting spends no retry", d.attempt, what,
		text.Clip(err.Error(), 300))
	if guessed {
		why += fmt.Sprintf("; it named no reset time, so ralph waits %s", unknownLimitWait)
	}
	l.decide(memory.DecisionRecord{Kind: "limit_wait", Task: t.ID,
		Detail: fmt.Sprintf("%s goes back to open; %s (%s)", t.ID, l.wait.Text, until.UTC().Format(time.RFC3339)), Reason: why})
	l.save(memory.StatusRunning, "")
	return ""
}

// hold is how long no task may start from now: a limit has not reset, or
// the breaker is open. It ends a wait that is over, saying so, and lets
// an open breaker whose cooldown passed go half-open.
func (l *loop) hold() time.Duration {
	now := time.Now()
	var wait time.Duration
	if w := l.wait; w != nil && w.Reason == memory.WaitDiskFull {
		wait = l.holdForDisk(now)
	} else if w != nil {
		if now.Before(w.Until) {
			wait = w.Until.Sub(now)
		} else {
			l.wait = nil
			note := "the wait for " + limitName(w.Reason) + " is over; going on"
			l.emit(coordinator.Event{Type: coordinator.EventLimitWait, Text: note})
			l.decide(memory.DecisionRecord{Kind: "limit_wait_over", Detail: note,
				Reason: "the reset time " + w.Until.UTC().Format(time.RFC3339) + " has passed"})
			l.save(memory.StatusRunning, "")
		}
	}
	if b := l.breakerHold(now); b > wait {
		wait = b
	}
	return wait
}

func limitName(reason string) string {
	if reason == memory.WaitUsageLimit {
		return "the usage limit"
	}
	return "the rate limit"
}

// roundWait is a wait as people read it: to the second, or the minute
// when long.
func roundWait(d time.Duration) time.Duration {
	if d >= 10*time.Minute {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}
