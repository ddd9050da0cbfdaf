package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// The task loop as a workflow. It is the local loop (loop.Run)
// on another host: the same decisions from coordinator/decide, in the same
// order, with the clock read from workflow.Now so a replay decides alike.
// What differs is where the work happens: an attempt is an activity on
// whichever worker takes it, and the task file is the target branch's,
// which only the integration activity writes, one at a time, since this
// workflow runs them one after another.

// DefaultHeartbeatTimeout is how long an attempt may go without a
// heartbeat before its worker counts as lost and Temporal gives the
// attempt to another.
const DefaultHeartbeatTimeout = 30 * time.Second

// maxEvents bounds the events the workflow keeps for clients to follow.
const maxEvents = 2000

// ReasonConfig and ReasonNoTasks end runs that could not work at all.
const (
	ReasonConfig  = loop.ReasonConfig
	ReasonNoTasks = "cannot read the task file"
)

// Conditions compiles --until and --breaker; ralph-temporal passes the
// same compiler ralph uses (loop.CompileCondition).
type Conditions func(name, expr string) (loop.Condition, error)

// EventPage answers the events query: the events from Since on, and the
// index to ask from next.
type EventPage struct {
	Events []coordinator.Event `json:"events"`
	Next   int                 `json:"next"`
}

// MessagePage answers the messages query: what ralph say sent for the
// agents, from an index on.
type MessagePage struct {
	Messages []Control `json:"messages"`
	Next     int       `json:"next"`
}

type inflight struct {
	task    memory.Task
	attempt int
	cancel  workflow.CancelFunc
	fut     workflow.Future
}

// loopWF is the state of one run of the workflow.
type loopWF struct {
	ctx        workflow.Context
	in         RunInput
	policy     decide.Policy
	until      loop.Condition
	trips      loop.Condition
	sessionID  string
	start      time.Time
	file       *memory.TaskFile
	running    map[string]*inflight
	attempts   map[string]int
	notBefore  map[string]time.Time
	waived     map[string]int
	lastTry    map[string]loop.LastTry
	streak     decide.Streak
	breaker    decide.Breaker
	iterations int
	errs       int
	done       []string
	failed     []string
	usage      conversation.Usage
	cost       float64
	paused     bool
	stopping   bool
	limitUntil time.Time
	events     []coordinator.Event
	eventBase  int // the index of events[0]
	messages   []Control
	delivered  int // messages before this index reached an attempt
	// workedBy is the worker of each task's last finished attempt, for
	// the status query's fleet; it is state only, so a replay decides
	// alike.
	workedBy map[string]string
}

// NewTaskLoop is the workflow function, with conditions compiled by cond.
func NewTaskLoop(cond Conditions) func(workflow.Context, RunInput) (RunResult, error) {
	return func(ctx workflow.Context, in RunInput) (RunResult, error) {
		w := &loopWF{ctx: ctx, in: in, policy: in.Policy(), running: map[string]*inflight{}, attempts: map[string]int{},
			notBefore: map[string]time.Time{}, waived: map[string]int{}, lastTry: map[string]loop.LastTry{}, workedBy: map[string]string{}, start: workflow.Now(ctx),
			sessionID: workflow.GetInfo(ctx).WorkflowExecution.RunID}
		w.trips = loop.DefaultBreaker
		var err error
		if in.Run.Until != "" {
			if w.until, err = cond("--until", in.Run.Until); err != nil {
				return RunResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "config", err)
			}
		}
		if in.Run.Breaker != "" {
			if w.trips, err = cond("--breaker", in.Run.Breaker); err != nil {
				return RunResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "config", err)
			}
		}
		if err := w.queries(); err != nil {
			return RunResult{}, err
		}
		sig := workflow.GetSignalChannel(ctx, SignalName)
		if _, err := w.integrate(nil); err != nil {
			return w.result(loop.Result{Reason: ReasonNoTasks, IsError: true, Err: err}), nil
		}
		if w.file.Counts().Total == 0 {
			return w.result(loop.Result{Reason: ReasonNoTasks, IsError: true,
				Err: fmt.Errorf("%s on %s has no tasks; add lines like \"- [ ] do something\" and push them", memory.TasksFile, in.Project.Branch)}), nil
		}
		return w.result(w.run(sig)), nil
	}
}

func (w *loopWF) queries() error {
	if err := workflow.SetQueryHandler(w.ctx, QueryStatus, func() (Status, error) { return w.status(), nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(w.ctx, QueryEvents, func(since int) (EventPage, error) {
		from := max(since-w.eventBase, 0)
		if from > len(w.events) {
			from = len(w.events)
		}
		return EventPage{Events: slices.Clone(w.events[from:]), Next: w.eventBase + len(w.events)}, nil
	}); err != nil {
		return err
	}
	return workflow.SetQueryHandler(w.ctx, QueryMessages, func(since int) (MessagePage, error) {
		since = min(max(since, 0), len(w.messages))
		return MessagePage{Messages: slices.Clone(w.messages[since:]), Next: len(w.messages)}, nil
	})
}

func (w *loopWF) run(sig workflow.ReceiveChannel) loop.Result {
	for {
		w.drain(sig)
		if w.stopping {
			return w.stop(loop.Result{Reason: decide.ReasonInterrupted, IsError: true})
		}
		if r, stop := w.checkLimits(); stop {
			return w.stop(r)
		}
		now := workflow.Now(w.ctx)
		ready, wait := decide.Ready(w.file.Ready(w.isRunning), w.notBefore, now)
		if w.paused {
			ready = nil
		}
		if hold := w.hold(now); hold > 0 {
			ready, wait = nil, hold
		}
		for _, t := range ready {
			if !w.policy.CanStart(len(w.running), w.breaker.Parallel(w.policy.Parallel), w.iterations) {
				break
			}
			w.begin(t)
		}
		if len(w.running) == 0 && w.paused {
			var c Control
			sig.Receive(w.ctx, &c)
			w.apply(c)
			continue
		}
		if len(w.running) == 0 && wait <= 0 {
			return w.final()
		}
		var finished *inflight
		sel := workflow.NewSelector(w.ctx)
		for _, id := range w.runningIDs() {
			f := w.running[id]
			sel.AddFuture(f.fut, func(workflow.Future) { finished = f })
		}
		sel.AddReceive(sig, func(c workflow.ReceiveChannel, _ bool) {
			var m Control
			c.Receive(w.ctx, &m)
			w.apply(m)
		})
		tctx, cancelTimer := workflow.WithCancel(w.ctx)
		if wait > 0 {
			sel.AddFuture(workflow.NewTimer(tctx, wait), func(workflow.Future) {})
		}
		sel.Select(w.ctx)
		cancelTimer()
		if finished != nil {
			if r, stop := w.finish(finished); stop {
				return w.stop(r)
			}
		}
	}
}

func (w *loopWF) isRunning(id string) bool { _, ok := w.running[id]; return ok }

// runningIDs are the tasks in flight in a fixed order: map order would
// make the workflow decide differently on replay.
func (w *loopWF) runningIDs() []string {
	ids := make([]string, 0, len(w.running))
	for id := range w.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// drain applies the signals that have arrived, without waiting.
func (w *loopWF) drain(sig workflow.ReceiveChannel) {
	for {
		var c Control
		if !sig.ReceiveAsync(&c) {
			return
		}
		w.apply(c)
	}
}

func (w *loopWF) apply(c Control) {
	switch c.Op {
	case remote.OpStop:
		w.stopping = true
	case remote.OpPause:
		w.paused = true
	case remote.OpContinue:
		w.paused = false
	case remote.OpSay:
		w.messages = append(w.messages, c)
		if len(w.running) > 0 {
			// The attempts in flight read it; none left for the next.
			w.delivered = len(w.messages)
		}
	}
}

func (w *loopWF) emit(ev coordinator.Event) {
	ev.Time = workflow.Now(w.ctx)
	ev.SessionID = w.sessionID
	if ev.AgentID == "" {
		ev.AgentID = coordinator.MainAgent
	}
	w.events = append(w.events, ev)
	if over := len(w.events) - maxEvents; over > 0 {
		w.events = slices.Clone(w.events[over:])
		w.eventBase += over
	}
}

// begin starts an attempt at t on some worker.
func (w *loopWF) begin(t memory.Task) {
	attempt := max(t.Attempts, w.attempts[t.ID]) + 1
	w.attempts[t.ID] = attempt
	w.emit(coordinator.Event{Type: coordinator.EventTaskChanged, Text: t.ID + " in_progress", Output: t.Title, Turn: w.iterations + 1,
		Task: t.ID, TaskAttempt: &coordinator.TaskAttempt{Number: attempt}})
	w.iterations++
	w.breaker.Started(t.ID)
	hb := w.heartbeatTimeout()
	actx, cancel := workflow.WithCancel(w.ctx)
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{
		// The attempt's own time limit is the agent's; this one covers
		// fetching, verifying and pushing besides.
		StartToCloseTimeout: time.Duration(w.in.Run.TaskTimeout) + 30*time.Minute,
		HeartbeatTimeout:    hb,
		WaitForCancellation: true,
		// A failed task is an outcome, settled by ralph's policy above;
		// an activity error means its worker was lost (or crashed), and
		// only that is retried, on any worker.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
	in := AttemptInput{Project: w.in.Project, Task: t, Attempt: attempt, Run: w.in.Run, Session: w.in.Session, Prompt: w.in.Prompt,
		SessionID: w.sessionID, MessagesFrom: w.delivered,
		LastError: w.lastTry[t.ID].Error, LastSummary: w.lastTry[t.ID].Summary}
	w.delivered = len(w.messages)
	w.running[t.ID] = &inflight{task: t, attempt: attempt, cancel: cancel, fut: workflow.ExecuteActivity(actx, AttemptName, in)}
}

func (w *loopWF) heartbeatTimeout() time.Duration {
	if w.in.HeartbeatTimeout > 0 {
		return w.in.HeartbeatTimeout
	}
	return DefaultHeartbeatTimeout
}

// stop cancels the attempts in flight, waits for each to end (their
// agents are stopped by then), and ends the loop with r.
func (w *loopWF) stop(r loop.Result) loop.Result {
	ids := w.runningIDs()
	for _, id := range ids {
		w.running[id].cancel()
	}
	for _, id := range ids {
		f := w.running[id]
		var out AttemptOutcome
		_ = f.fut.Get(w.ctx, &out)
		delete(w.running, id)
		w.addUsage(id, out)
		w.emit(w.ended(f, memory.TaskOpen, out, "interrupted"))
	}
	return r
}

func (w *loopWF) ended(f *inflight, state memory.TaskState, out AttemptOutcome, failure string) coordinator.Event {
	usage := out.Usage
	return coordinator.Event{Type: coordinator.EventTaskChanged, Text: f.task.ID + " " + string(state), Output: f.task.Title, Task: f.task.ID,
		TaskAttempt: &coordinator.TaskAttempt{Number: f.attempt, Error: text.Clip(failure, 1000)}, Usage: &usage, CostUSD: out.CostUSD}
}

func (w *loopWF) addUsage(id string, out AttemptOutcome) {
	if out.Worker != "" {
		w.workedBy[id] = out.Worker
	}
	w.usage = w.usage.Add(out.Usage)
	if out.CostUSD != nil {
		w.cost += *out.CostUSD
	}
}

// finish settles one attempt, as coordinator's loop.finish does. It
// reports whether the loop must stop.
func (w *loopWF) finish(f *inflight) (loop.Result, bool) {
	id := f.task.ID
	delete(w.running, id)
	var out AttemptOutcome
	if err := f.fut.Get(w.ctx, &out); err != nil {
		out = AttemptOutcome{Failure: "the attempt was lost: " + err.Error()}
	}
	w.addUsage(id, out)
	failure, final := out.Failure, false
	switch {
	case out.ErrKind == ErrKindConfig:
		w.errs++
		ev := w.ended(f, memory.TaskOpen, out, failure)
		ev.IsError = true
		w.emit(ev)
		return loop.Result{Reason: ReasonConfig, IsError: true, Err: errors.New(failure)}, true
	case out.ErrKind == ErrKindLimit:
		if failure = w.waitForLimit(f, out); failure == "" {
			return loop.Result{}, false
		}
	case failure == "" && !out.Completed:
		failure = "the worker finished without completing the task"
		if out.Summary != "" {
			failure += ": " + text.Clip(out.Summary, 300)
		}
	}
	now := workflow.Now(w.ctx)
	if failure == "" {
		body := out.Summary
		if u := out.Usage; u.InputTokens+u.OutputTokens > 0 {
			body += fmt.Sprintf("\n\nTokens for this task: %d in, %d out.", u.InputTokens, u.OutputTokens)
		}
		res, err := w.integrate([]TaskUpdate{{ID: id, State: memory.TaskDone, Attempts: f.attempt, Merge: true,
			Progress: &memory.ProgressEntry{Time: now, Title: f.task.Title, Body: body, SessionID: w.sessionID, Iteration: w.iterations, TaskID: id, Attempt: f.attempt}}})
		if err != nil {
			return loop.Result{Reason: "cannot update the task file", IsError: true, Err: err}, true
		}
		if c := res.Conflicts[id]; c != "" {
			failure, final = c, true
		} else {
			w.done = append(w.done, id)
			delete(w.lastTry, id)
			w.streak = w.streak.Succeeded()
			w.emit(w.ended(f, memory.TaskDone, out, ""))
			if w.breaker.Succeeded(id, w.policy.BreakerCooldown) {
				w.breakerChanged(fmt.Sprintf("half-open → closed: %s succeeded; tasks run again", id))
			}
			return loop.Result{}, false
		}
	}
	w.errs++
	w.streak = w.streak.Failed(failure)
	w.lastTry[id] = loop.LastTry{Error: failure, Summary: out.Summary}
	s := w.policy.SettleFailure(f.attempt, w.waived[id], final, now)
	if s.Next == memory.TaskOpen {
		w.notBefore[id] = s.NotBefore
	}
	if _, err := w.integrate([]TaskUpdate{{ID: id, State: s.Next, Attempts: f.attempt}}); err != nil {
		return loop.Result{Reason: "cannot update the task file", IsError: true, Err: err}, true
	}
	ev := w.ended(f, s.Next, out, failure)
	ev.IsError = true
	w.emit(ev)
	if s.Next == memory.TaskFailed {
		w.failed = append(w.failed, id)
	}
	if s.Abort {
		return loop.Result{Reason: decide.ReasonAborted, IsError: true, Err: fmt.Errorf("task %s failed: %s", id, failure)}, true
	}
	return w.breakerFailed(id, failure)
}

// waitForLimit handles an attempt a rate or usage limit cut short, as
// the local loop does: the attempt spends no retry and no iteration, and
// nothing starts before the reset. It returns the failure when the reset
// is further off than the run may wait.
func (w *loopWF) waitForLimit(f *inflight, out AttemptOutcome) string {
	now := workflow.Now(w.ctx)
	until := out.LimitUntil
	if until.IsZero() {
		until = now.Add(5 * time.Minute)
	}
	if w.in.MaxWait <= 0 || until.Sub(now) > w.in.MaxWait {
		return out.Failure + " (later than --max-wait lets ralph wait)"
	}
	w.waived[f.task.ID]++
	w.iterations--
	w.emit(w.ended(f, memory.TaskOpen, out, out.Failure))
	if until.After(w.limitUntil) {
		w.limitUntil = until
		w.emit(coordinator.Event{Type: coordinator.EventLimitWait, Text: "waiting for the limit until " + text.Clock(until, now), Until: until})
	}
	return ""
}

// hold is how long no task may start: a limit to reset, an open breaker.
func (w *loopWF) hold(now time.Time) time.Duration {
	var wait time.Duration
	if !w.limitUntil.IsZero() {
		if now.Before(w.limitUntil) {
			wait = w.limitUntil.Sub(now)
		} else {
			w.limitUntil = time.Time{}
			w.emit(coordinator.Event{Type: coordinator.EventLimitWait, Text: "the wait for the limit is over; going on"})
		}
	}
	b, halfOpened := w.breaker.Hold(now, w.isRunning)
	if halfOpened {
		w.breakerChanged("open → half-open: the cooldown is over; one task runs alone to see whether the trouble has passed")
	}
	return max(wait, b)
}

func (w *loopWF) breakerFailed(id, failure string) (loop.Result, bool) {
	switch w.breaker.Failed(id) {
	case decide.Reopen:
		w.openBreaker(fmt.Sprintf("half-open → open: %s failed again (%s); the cooldown doubles to %s", id, text.Clip(failure, 200), w.breaker.Cooldown))
		return loop.Result{}, false
	case decide.Ignore:
		return loop.Result{}, false
	}
	trip, err := w.trips(w.stats())
	if err != nil {
		why := "the breaker condition failed: " + err.Error()
		return loop.Result{Reason: decide.ReasonBreaker, IsError: true, Err: errors.New("circuit breaker: " + why)}, true
	}
	if trip {
		w.openBreaker(fmt.Sprintf("closed → open: %s in a row completed no task; last error: %s", text.Counted(w.streak.NoProgress, "attempt", "attempts"), text.Clip(failure, 200)))
	}
	return loop.Result{}, false
}

func (w *loopWF) openBreaker(why string) {
	now := workflow.Now(w.ctx)
	w.breaker.Open(now, w.policy.BreakerCooldown)
	w.breakerChanged(fmt.Sprintf("%s; one task runs at %s (cooldown %s)", why, text.Clock(w.breaker.Until, now), w.breaker.Cooldown))
}

func (w *loopWF) breakerChanged(detail string) {
	state := w.breaker.Name()
	w.emit(coordinator.Event{Type: coordinator.EventBreaker, State: state, Until: w.breaker.Until, Text: "circuit breaker " + detail,
		IsError: state == memory.BreakerOpen})
}

// stats are the figures --until and --breaker see.
func (w *loopWF) stats() loop.Stats {
	c := w.file.Counts()
	s := loop.Stats{Iterations: w.iterations, TasksOpen: c.Open + c.InProgress, TasksDone: c.Done, TasksFailed: c.Failed,
		Errors: w.errs, Tokens: w.usage.InputTokens + w.usage.OutputTokens, CostUSD: w.cost,
		ElapsedS: workflow.Now(w.ctx).Sub(w.start).Seconds(), NoProgress: w.streak.NoProgress, SameErrorRepeats: w.streak.SameErrorRepeats}
	if w.iterations > 0 {
		s.ErrorRate = float64(w.errs) / float64(w.iterations)
	}
	return s
}

// checkLimits evaluates the stop conditions at a boundary.
func (w *loopWF) checkLimits() (loop.Result, bool) {
	st := w.stats()
	if w.until != nil {
		ok, err := w.until(st)
		if err != nil {
			return loop.Result{Reason: "the --until condition failed", IsError: true, Err: err}, true
		}
		if ok {
			return loop.Result{Reason: decide.ReasonUntil, IsError: len(w.failed) > 0}, true
		}
	}
	if decide.CostSpent(w.cost, w.in.Run.MaxCost, st.TasksOpen, len(w.running)) {
		return loop.Result{Reason: decide.ReasonMaxCost, IsError: true,
			Err: coordinator.CostLimitError(w.in.Run.MaxCost, w.cost)}, true
	}
	if w.policy.OutOfIterations(w.iterations, len(w.running), st.TasksOpen) {
		return loop.Result{Reason: decide.ReasonMaxIterations, IsError: true,
			Err: fmt.Errorf("stopped after %s with %s open; raise --max-iterations", text.Counted(w.policy.MaxIterations, "iteration", "iterations"), text.Counted(st.TasksOpen, "task", "tasks"))}, true
	}
	return loop.Result{}, false
}

func (w *loopWF) final() loop.Result {
	c := w.file.Counts()
	reason, isError := decide.Final(c, len(w.failed))
	r := loop.Result{Reason: reason, IsError: isError}
	if reason == decide.ReasonStuck {
		r.Err = fmt.Errorf("%s cannot start: %s not done (see ralph status)", text.Counted(c.Open, "open task", "open tasks"), text.Plural(c.Open, "its dependencies are", "their dependencies are"))
	}
	return r
}

// integrate runs the integration activity, the target branch's only
// writer, and takes the task file it returns.
func (w *loopWF) integrate(updates []TaskUpdate) (IntegrateResult, error) {
	ctx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    w.heartbeatTimeout(),
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
	var res IntegrateResult
	if err := workflow.ExecuteActivity(ctx, IntegrateName, IntegrateInput{Project: w.in.Project, Updates: updates, SessionID: w.sessionID}).Get(w.ctx, &res); err != nil {
		return res, fmt.Errorf("integrating into %s: %w", w.in.Project.Branch, err)
	}
	w.file = memory.ParseTasks([]byte(res.Tasks))
	return res, nil
}

func (w *loopWF) status() Status {
	st := Status{WorkflowID: workflow.GetInfo(w.ctx).WorkflowExecution.ID, SessionID: w.sessionID, Status: memory.StatusRunning, Running: w.runningIDs(),
		Done: slices.Clone(w.done), Failed: slices.Clone(w.failed), Iterations: w.iterations, Breaker: w.breaker.Record(), CostUSD: w.cost}
	switch {
	case w.stopping:
		st.Status = "stopping"
	case w.paused:
		st.Status = memory.StatusPaused
	}
	if w.file != nil {
		st.Counts = w.file.Counts()
		st.Tasks = w.fleet()
	}
	return st
}

// fleet is every task of the task file with its attempt and the worker
// of its last finished attempt; which worker holds an attempt in flight
// the workflow does not know (Temporal gives it to whichever polls), so
// the status query's client adds it from the pending activities
// (FleetOf).
func (w *loopWF) fleet() []remote.FleetTask {
	var out []remote.FleetTask
	for _, t := range w.file.Tasks() {
		ft := remote.FleetTask{ID: t.ID, Title: t.Title, State: t.State, Attempt: max(t.Attempts, w.attempts[t.ID]), Worker: w.workedBy[t.ID]}
		if f, ok := w.running[t.ID]; ok {
			ft.State, ft.Attempt, ft.Worker = memory.TaskInProgress, f.attempt, ""
		}
		out = append(out, ft)
	}
	return out
}

func (w *loopWF) result(r loop.Result) RunResult {
	res := RunResult{Reason: r.Reason, IsError: r.IsError, Done: w.done, Failed: w.failed, Iterations: w.iterations,
		Usage: w.usage, CostUSD: w.cost, SessionID: w.sessionID}
	if r.Err != nil {
		res.Error = r.Err.Error()
	}
	if w.file != nil {
		res.Counts = w.file.Counts()
	}
	return res
}
