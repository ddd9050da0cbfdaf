package machine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// Outcome is how an attempt ended, as the host settled what only it can
// (the agent's work, verify, review, the commit of a done task).
type Outcome struct {
	Task    planfile.Task
	Attempt int
	// Done: the task is done and its completion is committed (the local
	// progress entry and mark; the merge into the target branch).
	Done bool
	// Failure is why the attempt failed ("" when Done or cut short).
	Failure string
	// Final: no retry can mend the failure (a merge conflict).
	Final bool
	// Interrupted: a stop cut the attempt short.
	Interrupted bool
	// ConfigErr: the model is configured wrongly; the loop stops.
	ConfigErr bool
	// Limit: a rate or usage limit cut the attempt short.
	Limit *Limit
	// DiskFull: the attempt failed on a full disk (OnFullDisk).
	DiskFull *DiskFull
	// Stopped counts the task's attempts earlier stops cut short, which
	// spend no retry.
	Stopped int
	Summary string
	// LastTry is what its retry is told (zero: Failure and Summary).
	LastTry LastTry
	Verify  *event.VerifyRun
	Usage   conversation.Usage
	Turns   int
	CostUSD *float64
}

// Limit is a rate or usage limit that cut an attempt short.
type Limit struct {
	// Until is when it resets (zero: it did not say).
	Until time.Time
	// Reason is memory.WaitRateLimit or WaitUsageLimit; What names it
	// in sentences ("the rate limit"); Err is the attempt's error.
	Reason, What, Err string
}

func (m *Machine) remove(id string) (inflight, bool) {
	i := slices.IndexFunc(m.running, func(f inflight) bool { return f.task.ID == id })
	if i < 0 {
		return inflight{}, false
	}
	f := m.running[i]
	m.running = slices.Delete(m.running, i, i+1)
	return f, true
}

func (m *Machine) addUsage(o Outcome) {
	m.usage = m.usage.Add(o.Usage)
	m.turns += o.Turns
	if o.CostUSD != nil {
		m.cost = text.RoundUSD(m.cost + *o.CostUSD)
	}
}

// ended is the task_changed event that ends an attempt.
func ended(o Outcome, state planfile.TaskState, failure string) event.Event {
	usage := o.Usage
	return event.Event{Type: event.TaskChanged, Text: o.Task.ID + " " + string(state), Output: o.Task.Title, Task: o.Task.ID,
		TaskAttempt: &event.TaskAttempt{Number: o.Attempt, Verify: o.Verify, Error: text.Clip(failure, 1000)},
		Usage:       &usage, CostUSD: o.CostUSD}
}

// Finished settles one attempt at the time now, f being the task file
// as the host has it.
func (m *Machine) Finished(now time.Time, f *planfile.TaskFile, o Outcome) Step {
	m.now = now
	var s Step
	id := o.Task.ID
	m.remove(id)
	m.addUsage(o)
	switch {
	case o.Interrupted:
		s.add(Effect{Kind: Commit, Task: o.Task, Attempt: o.Attempt, State: planfile.TaskOpen, Cause: StopCut})
		s.emit(ended(o, planfile.TaskOpen, "interrupted"))
		return s
	case o.ConfigErr:
		m.errs++
		ev := ended(o, planfile.TaskOpen, o.Failure)
		ev.IsError = true
		s.emit(ev)
		s.add(Effect{Kind: Commit, Task: o.Task, Attempt: o.Attempt - 1, State: planfile.TaskOpen, Cause: ConfigCut})
		m.record(&s, memory.DecisionRecord{Kind: "config_error", Task: id, Detail: "the loop stops; " + id + " goes back to open",
			Reason: text.Clip(o.Failure, 300) + "; no task can succeed until the configuration is fixed, so retrying would only spend attempts"})
		s.save(memory.StatusRunning, "")
		s.End = &End{Reason: ReasonConfig, IsError: true, Err: errors.New(o.Failure)}
		return s
	case o.DiskFull != nil:
		failure, waiting := m.waitForSpace(now, o, &s)
		if waiting {
			return s
		}
		o.Failure = failure
	case o.Limit != nil:
		failure, waiting := m.waitForLimit(now, o, &s)
		if waiting {
			return s
		}
		o.Failure = failure
	case o.Done:
		m.done = append(m.done, id)
		delete(m.tries, id)
		m.streak = m.streak.Succeeded()
		s.emit(ended(o, planfile.TaskDone, ""))
		if m.breaker.Succeeded(id, m.cfg.Policy.BreakerCooldown) {
			m.breakerChanged(now, &s, "breaker_closed", fmt.Sprintf("half-open → closed: %s succeeded; tasks run again", id),
				"half-open → closed: tasks run again", fmt.Sprintf("%s, the task the half-open breaker let through, succeeded", id))
		}
		s.save(memory.StatusRunning, "")
		return s
	}
	if o.Failure == "" {
		o.Failure = NotCompleted
	}
	m.errs++
	m.streak = m.streak.Failed(o.Failure)
	try := o.LastTry
	if try == (LastTry{}) {
		try = LastTry{Error: o.Failure, Summary: text.Clip(o.Summary, 1000)}
	}
	m.tries[id] = try
	waived := m.waived[id] + o.Stopped
	settled := m.cfg.Policy.SettleFailure(o.Attempt, waived, o.Final, now)
	retry := settled.Next == planfile.TaskOpen
	if retry {
		m.notBefore[id] = settled.NotBefore
	}
	s.add(Effect{Kind: Commit, Task: o.Task, Attempt: o.Attempt, State: settled.Next, Cause: Settled})
	ev := ended(o, settled.Next, o.Failure)
	ev.IsError = true
	s.emit(ev)
	m.record(&s, m.afterFailure(o.Task, o.Attempt, o.Attempt-waived, retry, o.Final, settled.Backoff, o.Failure))
	if settled.Next == planfile.TaskFailed {
		m.failed = append(m.failed, id)
	}
	s.save(memory.StatusRunning, "")
	if settled.Abort {
		s.End = &End{Reason: decide.ReasonAborted, IsError: true, Err: fmt.Errorf("task %s failed: %s", id, o.Failure)}
		return s
	}
	m.breakerFailed(now, f, id, o.Failure, retry, &s)
	return s
}

// waitForLimit handles an attempt a limit cut short: the task goes back
// to open, the attempt counts neither as an iteration nor against the
// task's retries, and no task starts before the reset. It reports
// waiting, or the failure when the reset is further off than MaxWait
// allows and the attempt fails as any other.
func (m *Machine) waitForLimit(now time.Time, o Outcome, s *Step) (string, bool) {
	l := o.Limit
	until, guessed := l.Until, l.Until.IsZero()
	if guessed {
		until = now.Add(UnknownLimitWait)
	}
	if m.cfg.MaxWait <= 0 {
		return fmt.Sprintf("%s (ralph does not wait for limits with --max-wait 0)", l.Err), false
	}
	if until.Sub(now) > m.cfg.MaxWait {
		return fmt.Sprintf("%s resets at %s, in %s, later than --max-wait (%s) lets ralph wait: %s",
			l.What, text.Clock(until, now), roundWait(until.Sub(now)), m.cfg.MaxWait, l.Err), false
	}
	id := o.Task.ID
	s.add(Effect{Kind: Commit, Task: o.Task, Attempt: o.Attempt, State: planfile.TaskOpen, Cause: LimitCut})
	m.waived[id]++
	m.iterations--
	s.emit(ended(o, planfile.TaskOpen, l.Err))
	if m.wait == nil || until.After(m.wait.Until) {
		note := "waiting for " + l.What + " until " + text.Clock(until, now)
		if guessed {
			note = "waiting for " + l.What + " (it named no reset time) until " + text.Clock(until, now)
		}
		m.wait = &memory.Wait{Reason: l.Reason, Until: until, Text: note}
		s.emit(event.Event{Type: event.LimitWait, Text: note, Until: until})
	}
	why := fmt.Sprintf("attempt %d was stopped by %s: %s; no attempt can succeed before it resets, so waiting spends no retry", o.Attempt, l.What,
		text.Clip(l.Err, 300))
	if guessed {
		why += fmt.Sprintf("; it named no reset time, so ralph waits %s", UnknownLimitWait)
	}
	m.record(s, memory.DecisionRecord{Kind: "limit_wait", Task: id,
		Detail: fmt.Sprintf("%s goes back to open; %s (%s)", id, m.wait.Text, until.UTC().Format(time.RFC3339)), Reason: why})
	s.save(memory.StatusRunning, "")
	return "", true
}

// hold is how long no task may start from now: a limit has not reset,
// or the breaker is open. It ends a wait that is over, saying so, and
// lets an open breaker whose cooldown passed go half-open. A wait for
// space asks the host to look (Look) once its time has come.
func (m *Machine) hold(now time.Time, s *Step) time.Duration {
	var wait time.Duration
	if m.waitingForSpace() {
		wait = m.holdForSpace(now, s)
	} else if w := m.wait; w != nil {
		if now.Before(w.Until) {
			wait = w.Until.Sub(now)
		} else {
			m.wait = nil
			note := "the wait for " + limitName(w.Reason) + " is over; going on"
			s.emit(event.Event{Type: event.LimitWait, Text: note})
			m.record(s, memory.DecisionRecord{Kind: "limit_wait_over", Detail: note,
				Reason: "the reset time " + w.Until.UTC().Format(time.RFC3339) + " has passed"})
			s.save(memory.StatusRunning, "")
		}
	}
	b, halfOpened := m.breaker.Hold(now, m.IsRunning)
	if halfOpened {
		m.breakerChanged(now, s, "breaker_half_open", "open → half-open: the cooldown is over; one task runs alone to see whether the trouble has passed",
			"open → half-open: one task runs alone", fmt.Sprintf("the cooldown of %s is over; one task shows whether the trouble has passed before all run again", m.breaker.Cooldown))
	}
	return max(wait, b)
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

// breakerFailed judges a failed attempt: a half-open breaker's probe
// opens it again for twice as long; otherwise, unless nothing is left to
// start, the condition is evaluated and, when it holds, a person is
// asked or the breaker opens.
func (m *Machine) breakerFailed(now time.Time, f *planfile.TaskFile, id, failure string, retry bool, s *Step) {
	switch m.breaker.Failed(id) {
	case decide.Reopen:
		m.openBreaker(now, s, "half-open → open", fmt.Sprintf("%s failed again (%s); the cooldown doubles to %s", id, text.Clip(failure, 200), m.breaker.Cooldown))
		return
	case decide.Ignore:
		return
	}
	if !retry && !m.cfg.Legacy && m.nothingLeftBut(now, f, id) {
		// No task can start again (every one done, failed or blocked):
		// the loop ends now, with nothing to ask about or wait out. The
		// failed task itself is judged by its settlement, since the host
		// commits its new state only after this step.
		return
	}
	st := m.Stats(now, f)
	trip := false
	var err error
	if m.cfg.Breaker != nil {
		trip, err = m.cfg.Breaker(st)
	}
	if err == nil && !trip {
		return
	}
	why := fmt.Sprintf("%s in a row completed no task; last error: %s", text.Counted(st.NoProgress, "attempt", "attempts"), text.Clip(failure, 200))
	if err != nil {
		why = "the breaker condition failed: " + err.Error()
		m.record(s, memory.DecisionRecord{Kind: "breaker", Task: id, Detail: "the loop stops", Reason: why})
		s.End = &End{Reason: decide.ReasonBreaker, IsError: true, Err: fmt.Errorf("circuit breaker: %s", why)}
		return
	}
	if m.cfg.CanAsk {
		q := "circuit breaker: " + why + ". Go on?"
		m.record(s, memory.DecisionRecord{Kind: "breaker", Task: id, Detail: "the person is asked whether to go on", Reason: why + "; someone can be asked"})
		m.ask = &asking{what: "breaker", question: q, why: why}
		s.add(Effect{Kind: Ask, Question: q})
		s.Asking = true
		return
	}
	m.openBreaker(now, s, "closed → open", why)
}

func (m *Machine) openBreaker(now time.Time, s *Step, change, why string) {
	b := &m.breaker
	b.Open(now, m.cfg.Policy.BreakerCooldown)
	m.breakerChanged(now, s, "breaker_open", fmt.Sprintf("%s: %s; one task runs at %s (cooldown %s)", change, why, text.Clock(b.Until, now), b.Cooldown),
		fmt.Sprintf("%s: no task starts until %s (cooldown %s)", change, b.Until.UTC().Format(time.RFC3339), b.Cooldown),
		why+"; nobody can be asked whether to go on, so the loop waits before it tries one task again")
}

// breakerChanged records a change of state: the decision, the event and
// the session's state.
func (m *Machine) breakerChanged(_ time.Time, s *Step, kind, txt, detail, reason string) {
	m.record(s, memory.DecisionRecord{Kind: kind, Detail: detail, Reason: reason})
	state := m.breaker.Name()
	s.emit(event.Event{Type: event.Breaker, State: state, Until: m.breaker.Until, Text: "circuit breaker " + txt, IsError: state == memory.BreakerOpen})
	s.save(memory.StatusRunning, "")
}

// alternativesLimit bounds the other ready tasks a task_picked decision
// names.
const alternativesLimit = 5

// picked is the decision to start an attempt at t: why this task, and
// which ready tasks ranked after it: later are the first of them, of
// laterCount in all.
func picked(t planfile.Task, attempt int, later []planfile.Task, laterCount int, b decide.Breaker) memory.DecisionRecord {
	var why []string
	switch {
	case laterCount == 0:
		why = append(why, "the only ready task")
	default:
		why = append(why, fmt.Sprintf("the most urgent of %d ready tasks (priority %d, then file order: line %d)", laterCount+1, t.Priority, t.Line))
	}
	if len(t.Depends) > 0 {
		why = append(why, "the tasks it depends on ("+strings.Join(t.Depends, ", ")+") are done")
	}
	if attempt > 1 {
		why = append(why, fmt.Sprintf("attempt %d failed and its backoff is over", attempt-1))
	}
	if b.State == memory.BreakerHalfOpen && b.Probe == "" {
		why = append(why, "the circuit breaker is half-open, so it runs alone to show whether the trouble has passed")
	}
	d := memory.DecisionRecord{Kind: "task_picked", Task: t.ID, Detail: fmt.Sprintf("%s (%s), attempt %d", t.ID, t.Title, attempt),
		Reason: strings.Join(why, "; ")}
	for _, o := range later[:min(len(later), alternativesLimit)] {
		d.Alternatives = append(d.Alternatives, o.ID+" "+text.Clip(o.Title, 60))
	}
	return d
}

// afterFailure is the decision a failed attempt leads to: a retry, the
// task marked failed while the loop goes on (task_skip), or the loop
// stopped (task_abort). used counts the attempts that spent a retry.
func (m *Machine) afterFailure(t planfile.Task, attempt, used int, retry, final bool, backoff time.Duration, failure string) memory.DecisionRecord {
	p := m.cfg.Policy
	d := memory.DecisionRecord{Task: t.ID}
	why := text.Clip(failure, 300)
	switch {
	case retry:
		d.Kind = "task_retry"
		d.Detail = fmt.Sprintf("%s attempt %d failed; it is tried again in %s, told what went wrong", t.ID, attempt, backoff)
		d.Reason = fmt.Sprintf("%s; --on-error retry allows %d %s and this is retry %d", why, p.Retries, text.Plural(p.Retries, "retry", "retries"), used)
	case p.OnError == decide.OnErrorAbort:
		d.Kind = "task_abort"
		d.Detail = fmt.Sprintf("%s attempt %d failed; it is marked failed and the loop stops", t.ID, attempt)
		d.Reason = why + "; --on-error abort stops the loop at the first failed attempt"
	default:
		d.Kind = "task_skip"
		d.Detail = fmt.Sprintf("%s attempt %d failed; it is marked failed and the loop goes on without it", t.ID, attempt)
		switch {
		case final:
			d.Reason = why + "; no retry can mend this"
		case p.OnError == decide.OnErrorSkip:
			d.Reason = why + "; --on-error skip marks a task failed at its first failed attempt"
		default:
			d.Reason = fmt.Sprintf("%s; %d %s failed and --retries %d allows no more", why, used, text.Plural(used, "attempt", "attempts"), p.Retries)
		}
	}
	return d
}
