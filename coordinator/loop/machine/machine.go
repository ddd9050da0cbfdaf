package machine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// Stats are the figures user-written conditions see (--until, the
// circuit breaker, quality gates). Field names are the variable names in
// expressions, via the expr tags, and part of ralph's documented contract.
type Stats struct {
	Iterations       int     `expr:"iterations" json:"iterations"`
	TasksOpen        int     `expr:"tasks_open" json:"tasks_open"`
	TasksDone        int     `expr:"tasks_done" json:"tasks_done"`
	TasksFailed      int     `expr:"tasks_failed" json:"tasks_failed"`
	Errors           int     `expr:"errors" json:"errors"`
	ErrorRate        float64 `expr:"error_rate" json:"error_rate"` // failed iterations / iterations
	Tokens           int     `expr:"tokens" json:"tokens"`
	CostUSD          float64 `expr:"cost_usd" json:"cost_usd"`
	ElapsedS         float64 `expr:"elapsed_s" json:"elapsed_s"`
	NoProgress       int     `expr:"no_progress" json:"no_progress"`               // consecutive iterations that completed no task
	SameErrorRepeats int     `expr:"same_error_repeats" json:"same_error_repeats"` // consecutive iterations failing with the same error
}

// Condition is a compiled user condition over Stats.
type Condition func(Stats) (bool, error)

// Config is what a run's machine follows.
type Config struct {
	// Policy: iterations, parallel tasks, failures, backoff, cooldown
	// (zero fields take decide's defaults).
	Policy decide.Policy
	// MaxCost stops the loop once the known cost reaches it (0: none).
	MaxCost float64
	// MaxWait bounds how long the loop waits for a limit to reset.
	MaxWait time.Duration
	// Until ends the loop, successfully, once it holds (nil: never).
	Until Condition
	// Breaker trips the circuit breaker (nil: never).
	Breaker Condition
	// CanAsk: a person may be asked (Ask effects) whether to go on when
	// the breaker trips or the budget is spent; without one the breaker
	// opens for its cooldown and a spent budget stops the loop.
	CanAsk bool
	// Prior continues a resumed session's counters.
	Prior *memory.State
	// Continue goes on from another machine's Snapshot, the same run
	// carried to a new host process (Temporal's continue-as-new); it
	// takes precedence over Prior.
	Continue *Snapshot
	// Legacy keeps two behaviours of the Temporal workflow before this
	// machine (f31c8f1), for replaying workflows started then: a hold
	// (limit, open breaker) is waited out even when no task could start
	// after it, and a failure with nothing left still trips the
	// breaker. Both made it wait for nothing; new runs never set it.
	Legacy bool
}

// ReasonConfig ends a loop whose model is configured wrongly.
const ReasonConfig = "the model is configured wrongly"

// UnknownLimitWait is how long the loop waits for a limit whose reset
// the agent did not name before it tries again.
const UnknownLimitWait = 5 * time.Minute

type inflight struct {
	task    planfile.Task
	attempt int
}

// LastTry is how a task's latest failed attempt went, which its retry is
// told.
type LastTry struct{ Error, Verify, Summary string }

// asking is a question put to a person and what its answer decides.
type asking struct {
	what     string // "breaker" or "budget"
	question string
	why      string
}

// Machine is the state of one run of the task loop. Its zero value is
// not ready: use New.
type Machine struct {
	cfg        Config
	start      time.Time
	running    []inflight // in the order they started
	attempts   map[string]int
	notBefore  map[string]time.Time
	waived     map[string]int
	tries      map[string]LastTry
	streak     decide.Streak
	breaker    decide.Breaker
	iterations int
	errs       int
	done       []string
	failed     []string
	usage      conversation.Usage
	turns      int
	cost       float64
	paused     bool
	idleSaid   bool // the pause with nothing in flight is recorded
	stopping   bool
	wait       *memory.Wait
	ask        *asking
	// now is the time of the input being handled, which decision
	// records carry.
	now time.Time
}

// New is a machine starting at now.
func New(cfg Config, now time.Time) *Machine {
	cfg.Policy = cfg.Policy.WithDefaults()
	m := &Machine{cfg: cfg, start: now, attempts: map[string]int{}, notBefore: map[string]time.Time{}, waived: map[string]int{},
		tries: map[string]LastTry{}}
	if p := cfg.Prior; p != nil {
		m.iterations, m.errs, m.usage, m.turns = p.Iteration, p.Errors, p.Usage, p.Turns
		if p.CostUSD != nil {
			m.cost = *p.CostUSD
		}
	}
	if c := cfg.Continue; c != nil {
		m.restore(c)
	}
	return m
}

// Policy is the policy the machine follows, with its defaults.
func (m *Machine) Policy() decide.Policy { return m.cfg.Policy }

// IsRunning reports whether an attempt at task id is in flight.
func (m *Machine) IsRunning(id string) bool {
	return slices.ContainsFunc(m.running, func(f inflight) bool { return f.task.ID == id })
}

// Running are the tasks in flight, in the order they started.
func (m *Machine) Running() []string {
	ids := make([]string, 0, len(m.running))
	for _, f := range m.running {
		ids = append(ids, f.task.ID)
	}
	return ids
}

// Attempt is the number of task id's latest attempt this run (0: none).
func (m *Machine) Attempt(id string) int { return m.attempts[id] }

// LastTry is how task id's latest failed attempt went.
func (m *Machine) LastTry(id string) LastTry { return m.tries[id] }

// Done and Failed are the tasks settled so, in order.
func (m *Machine) Done() []string   { return slices.Clone(m.done) }
func (m *Machine) Failed() []string { return slices.Clone(m.failed) }

// Iterations counts the attempts begun (those a limit cut short not).
func (m *Machine) Iterations() int { return m.iterations }

// Usage, Turns and Cost are what the attempts spent.
func (m *Machine) Usage() conversation.Usage { return m.usage }
func (m *Machine) Turns() int                { return m.turns }
func (m *Machine) Cost() float64             { return m.cost }

// Errors counts the failed attempts.
func (m *Machine) Errors() int { return m.errs }

// Breaker is the circuit breaker's state.
func (m *Machine) Breaker() decide.Breaker { return m.breaker }

// Wait is the limit the loop waits for (nil: none).
func (m *Machine) Wait() *memory.Wait { return m.wait }

// Paused and Stopping say what control ops asked.
func (m *Machine) Paused() bool   { return m.paused }
func (m *Machine) Stopping() bool { return m.stopping }

// Stats are the figures conditions see, with f's counts.
func (m *Machine) Stats(now time.Time, f *planfile.TaskFile) Stats {
	s := Stats{Iterations: m.iterations, Errors: m.errs, Tokens: m.usage.InputTokens + m.usage.OutputTokens, CostUSD: m.cost,
		ElapsedS: now.Sub(m.start).Seconds(), NoProgress: m.streak.NoProgress, SameErrorRepeats: m.streak.SameErrorRepeats}
	if f != nil {
		c := f.Counts()
		s.TasksOpen, s.TasksDone, s.TasksFailed = c.Open+c.InProgress, c.Done, c.Failed
	}
	if m.iterations > 0 {
		s.ErrorRate = float64(m.errs) / float64(m.iterations)
	}
	return s
}

// Pause, Resume and Stop are the control ops. A pause lets the attempts
// in flight finish and starts none; a stop ends the loop at the next
// boundary, the host cancelling what is in flight.
func (m *Machine) Pause() { m.paused = true }

// Resume undoes Pause; it records the decision when the loop was idle.
func (m *Machine) Resume(now time.Time) Step {
	m.now = now
	var s Step
	if !m.paused {
		return s
	}
	m.paused = false
	if m.idleSaid {
		m.idleSaid = false
		m.record(&s, memory.DecisionRecord{Kind: "resumed", Detail: "the task loop was resumed",
			Reason: "a person resumed it (ralph continue, or /run in chat)", By: memory.DecidedByPerson})
		s.save(memory.StatusRunning, "")
	}
	return s
}

// Stop ends the loop at the next boundary.
func (m *Machine) Stop() { m.stopping = true }

func (m *Machine) record(s *Step, d memory.DecisionRecord) {
	if d.Turn == 0 {
		d.Turn = m.iterations
	}
	if d.Time.IsZero() {
		d.Time = m.now.UTC()
	}
	s.record(d)
}

// Next is the boundary: the stop conditions, the waits, and the attempts
// that start now at the ready tasks of f.
func (m *Machine) Next(now time.Time, f *planfile.TaskFile) Step {
	m.now = now
	var s Step
	if m.ask != nil {
		s.Asking = true
		return s
	}
	if m.stopping {
		s.End = &End{Reason: decide.ReasonInterrupted, IsError: true}
		return s
	}
	if m.checkLimits(now, f, &s); s.End != nil || s.Asking {
		return s
	}
	hold := m.hold(now, &s)
	parallel := m.breaker.Parallel(m.cfg.Policy.Parallel)
	ready, count, wait := m.ready(f, now, "", parallel+alternativesLimit)
	if m.paused {
		ready, count = nil, 0
	}
	forSpace := m.waitingForSpace()
	if hold > 0 && (m.cfg.Legacy || forSpace || count > 0 || wait > 0 || len(m.running) > 0) {
		// A limit to reset or an open breaker: nothing starts before.
		// When no task could start again anyway there is nothing to
		// wait for, and the loop ends below.
		ready, count, wait = nil, 0, hold
	}
	for i, t := range ready {
		if !m.cfg.Policy.CanStart(len(m.running), parallel, m.iterations) {
			break
		}
		m.begin(t, ready[i+1:], count-i-1, &s)
	}
	switch {
	case len(m.running) == 0 && m.paused:
		s.Idle = true
		if !m.idleSaid {
			m.idleSaid = true
			s.save(memory.StatusPaused, "")
			m.record(&s, memory.DecisionRecord{Kind: "paused", Detail: "the task loop was paused; tasks in flight have finished",
				Reason: "a person paused it (ralph pause, or /pause in chat)", By: memory.DecidedByPerson})
		}
	case len(m.running) == 0 && wait <= 0:
		s.End = m.final(f)
	default:
		s.Wait = wait
	}
	return s
}

// begin starts an attempt at t; later are the ready tasks ranked after
// it.
func (m *Machine) begin(t planfile.Task, later []planfile.Task, laterCount int, s *Step) {
	attempt := max(t.Attempts, m.attempts[t.ID]) + 1
	m.attempts[t.ID] = attempt
	s.add(Effect{Kind: Start, Task: t, Attempt: attempt})
	s.emit(event.Event{Type: event.TaskChanged, Text: t.ID + " in_progress", Output: t.Title, Turn: m.iterations + 1,
		Task: t.ID, TaskAttempt: &event.TaskAttempt{Number: attempt}})
	m.record(s, picked(t, attempt, later, laterCount, m.breaker))
	m.iterations++
	m.breaker.Started(t.ID)
	m.running = append(m.running, inflight{task: t, attempt: attempt})
	s.save(memory.StatusRunning, t.ID)
}

// NotStarted takes back an attempt whose start the host could not carry
// out (another worker claimed the task first): it was never begun.
func (m *Machine) NotStarted(id string) {
	i := slices.IndexFunc(m.running, func(f inflight) bool { return f.task.ID == id })
	if i < 0 {
		return
	}
	m.running = slices.Delete(m.running, i, i+1)
	m.attempts[id]--
	m.iterations--
	if m.breaker.Probe == id {
		m.breaker.Probe = ""
	}
}

// checkLimits evaluates the stop conditions at a boundary.
func (m *Machine) checkLimits(now time.Time, f *planfile.TaskFile, s *Step) {
	st := m.Stats(now, f)
	if m.cfg.Until != nil {
		ok, err := m.cfg.Until(st)
		if err != nil {
			s.End = &End{Reason: "the --until condition failed", IsError: true, Err: err}
			return
		}
		if ok {
			s.End = &End{Reason: decide.ReasonUntil, IsError: len(m.failed) > 0}
			return
		}
	}
	// A budget spent by the last task stops nothing: with no task left
	// the loop ends on the tasks' account (final), not the budget's.
	if decide.CostSpent(m.cost, m.cfg.MaxCost, st.TasksOpen, len(m.running)) {
		if m.cfg.CanAsk {
			q := fmt.Sprintf("the cost limit of %s is reached (%s spent). Allow another %s?", text.Dollars(m.cfg.MaxCost), text.Dollars(m.cost), text.Dollars(m.cfg.MaxCost))
			m.ask = &asking{what: "budget", question: q}
			s.add(Effect{Kind: Ask, Question: q})
			s.Asking = true
			return
		}
		m.record(s, memory.DecisionRecord{Kind: "budget_stop", Detail: "the loop stops at the cost limit",
			Reason: fmt.Sprintf("the known cost %s reached --max-cost %s and nobody can be asked to raise it", text.Dollars(m.cost), text.Dollars(m.cfg.MaxCost))})
		s.End = &End{Reason: decide.ReasonMaxCost, IsError: true, Err: costLimitError(m.cfg.MaxCost, m.cost)}
		return
	}
	if m.cfg.Policy.OutOfIterations(m.iterations, len(m.running), st.TasksOpen) {
		s.End = &End{Reason: decide.ReasonMaxIterations, IsError: true,
			Err: fmt.Errorf("stopped after %s with %s open; raise --max-iterations", text.Counted(m.cfg.Policy.MaxIterations, "iteration", "iterations"), text.Counted(st.TasksOpen, "task", "tasks"))}
	}
}

// final is why a loop with nothing left to start and nothing running
// ends.
func (m *Machine) final(f *planfile.TaskFile) *End {
	c := f.Counts()
	reason, isError := decide.Final(c, len(m.failed))
	e := &End{Reason: reason, IsError: isError}
	if reason == decide.ReasonStuck {
		e.Err = fmt.Errorf("%s cannot start: %s not done (see ralph status)", text.Counted(c.Open, "open task", "open tasks"), text.Plural(c.Open, "its dependencies are", "their dependencies are"))
		if p := f.GraphProblems(); len(p) > 0 {
			// A dependency that names no task (a person's typo, a line
			// that holds no task) is why: said as itself, not as a wait.
			e.Err = errors.New(p[0])
		}
	}
	return e
}

// NothingLeft reports whether no task could start again: none is in
// flight, none is ready and none is backing off before a retry.
func (m *Machine) NothingLeft(now time.Time, f *planfile.TaskFile) bool {
	return m.nothingLeftBut(now, f, "")
}

// nothingLeftBut is NothingLeft with task but left out.
func (m *Machine) nothingLeftBut(now time.Time, f *planfile.TaskFile, but string) bool {
	if len(m.running) > 0 || f == nil {
		return false
	}
	_, count, wait := m.ready(f, now, but, 0)
	return count == 0 && wait == 0
}

// ready is the task file's ready tasks, those running, but and those
// backing off left out: the first n, most urgent first, how many there
// are in all, and how long until the first held one may start.
func (m *Machine) ready(f *planfile.TaskFile, now time.Time, but string, n int) ([]planfile.Task, int, time.Duration) {
	b := decide.Backoff{NotBefore: m.notBefore, Now: now}
	// The pass over the plan asks about every open task, ten thousand of
	// them in a long plan, at every step: where nothing is in flight,
	// left out or backing off, it asks nothing.
	var exclude func(id string) bool
	if but != "" || len(m.running) > 0 || m.anyHeld(now) {
		exclude = func(id string) bool { return id == but || m.IsRunning(id) || b.Holds(id) }
	}
	top, count := f.ReadyFirst(exclude, n)
	return top, count, b.Wait
}

// anyHeld reports whether a task is still backing off at now.
func (m *Machine) anyHeld(now time.Time) bool {
	for _, nb := range m.notBefore {
		if nb.After(now) {
			return true
		}
	}
	return false
}

// Answer is the person's answer to the pending question: yes, or no
// (answered false: nobody answered in time, which is the question's
// default, no).
func (m *Machine) Answer(now time.Time, yes, answered bool) Step {
	m.now = now
	var s Step
	a := m.ask
	if a == nil {
		return s
	}
	m.ask = nil
	by, no := memory.DecidedByPerson, "the person did not answer yes to: "+a.question
	if !answered {
		by, no = "", "nobody answered, and the default is no, to: "+a.question
	}
	switch a.what {
	case "budget":
		if yes {
			m.record(&s, memory.DecisionRecord{Kind: "budget_raised", Detail: fmt.Sprintf("the cost limit goes from %s to %s", text.Dollars(m.cfg.MaxCost), text.Dollars(2*m.cfg.MaxCost)),
				By: by, Reason: "the person answered yes to: " + a.question})
			m.cfg.MaxCost *= 2
			return s
		}
		m.record(&s, memory.DecisionRecord{Kind: "budget_stop", Detail: "the loop stops at the cost limit", By: by, Reason: no})
		s.End = &End{Reason: decide.ReasonMaxCost, IsError: true, Err: costLimitError(m.cfg.MaxCost, m.cost)}
	default:
		if yes {
			m.record(&s, memory.DecisionRecord{Kind: "breaker_go_on", Detail: "the loop goes on", By: by,
				Reason: "the person answered yes to: " + a.question})
			m.streak = decide.Streak{}
			return s
		}
		m.record(&s, memory.DecisionRecord{Kind: "breaker_stop", Detail: "the loop stops", By: by, Reason: no})
		s.End = &End{Reason: decide.ReasonBreaker, IsError: true, Err: errors.New("circuit breaker: " + a.why)}
	}
	return s
}
