package engine

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// The task loop as a workflow. It is the local loop (loop.Run)
// on another host: the same machine (coordinator/loop/machine) decides,
// in the same order, with the clock read from workflow.Now so a replay
// decides alike.
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

// EventPage answers the events query: the events from Since on, the
// index to ask from next, and the run that answered (a run continued as
// new numbers its events on from where the run before stopped).
type EventPage struct {
	Events []event.Event `json:"events"`
	Next   int           `json:"next"`
	Run    string        `json:"run,omitempty"`
}

// MessagePage answers the messages query: what ralph say sent for the
// agents, from an index on.
type MessagePage struct {
	Messages []Control `json:"messages"`
	Next     int       `json:"next"`
}

type inflight struct {
	task    planfile.Task
	attempt int
	cancel  workflow.CancelFunc
	fut     workflow.Future
}

// machineVersion gates the command sequence of the task-loop machine
// (coordinator/loop/machine): workflows started before it (f31c8f1)
// replay with DefaultVersion, which keeps their waits (Config.Legacy);
// new ones end when nothing is left and may ask a person.
const (
	machineChange  = "onemachine"
	machineVersion = 1
)

// loopWF is the Temporal host of the task-loop machine: the machine
// holds the loop's bookkeeping, and this type carries out its effects
// with Temporal's commands (attempts and the task file's writes are
// activities, waits are timers, a question is a signal wait) and keeps
// what only the host has: the futures in flight, the events and
// messages clients query, and the task file as the branch holds it.
type loopWF struct {
	ctx       workflow.Context
	in        RunInput
	m         *machine.Machine
	sessionID string
	file      *planfile.TaskFile
	// text is the task file's text, to which an integration's diff
	// applies; short says the run asks for diffs and continues as new
	// (historyChange).
	text  string
	short bool
	// answers are answers to questions that came before the question
	// did, carried over from the run before (Continued).
	answers []Answer
	// historyLength counts this run's history events; nil is
	// Temporal's count (tests set it: the SDK's test environment keeps
	// no history).
	historyLength func(workflow.Context) int
	// begun counts the attempts this run began.
	begun     int
	running   map[string]*inflight
	asking    string // the pending question, "" when none
	question  *memory.Question
	events    []event.Event
	eventBase int // the index of events[0]
	messages  []Control
	delivered int // messages before this index reached an attempt
	// workedBy is the worker of each task's last finished attempt, for
	// the status query's fleet; it is state only, so a replay decides
	// alike.
	workedBy map[string]string
}

// NewTaskLoop is the workflow function, with conditions compiled by cond.
func NewTaskLoop(cond Conditions) func(workflow.Context, RunInput) (RunResult, error) {
	return taskLoop(cond, nil)
}

// taskLoop is NewTaskLoop with the count of history events its tests
// give (nil: Temporal's).
func taskLoop(cond Conditions, historyLength func(workflow.Context) int) func(workflow.Context, RunInput) (RunResult, error) {
	return func(ctx workflow.Context, in RunInput) (RunResult, error) {
		v := workflow.GetVersion(ctx, machineChange, workflow.DefaultVersion, machineVersion)
		cfg := machine.Config{Policy: in.Policy(), MaxCost: in.Run.MaxCost, MaxWait: in.MaxWait, Breaker: loop.DefaultBreaker,
			Legacy: v == workflow.DefaultVersion, CanAsk: in.Ask && v >= machineVersion}
		w := &loopWF{ctx: ctx, in: in, running: map[string]*inflight{}, workedBy: map[string]string{},
			sessionID: workflow.GetInfo(ctx).WorkflowExecution.RunID, historyLength: historyLength,
			short: workflow.GetVersion(ctx, historyChange, workflow.DefaultVersion, historyVersion) >= historyVersion}
		w.takeOver(&cfg)
		var err error
		if in.Run.Until != "" {
			if cfg.Until, err = cond("--until", in.Run.Until); err != nil {
				return RunResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "config", err)
			}
		}
		if in.Run.Breaker != "" {
			if cfg.Breaker, err = cond("--breaker", in.Run.Breaker); err != nil {
				return RunResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "config", err)
			}
		}
		w.m = machine.New(cfg, workflow.Now(ctx))
		if err := w.queries(); err != nil {
			return RunResult{}, err
		}
		sig := workflow.GetSignalChannel(ctx, SignalName)
		if _, err := w.integrate(nil); err != nil {
			return w.result(machine.End{Reason: ReasonNoTasks, IsError: true, Err: err}), nil
		}
		if w.file.Counts().Total == 0 {
			return w.result(machine.End{Reason: ReasonNoTasks, IsError: true,
				Err: fmt.Errorf("%s on %s has no tasks; add lines like \"- [ ] do something\" and push them", memory.TasksFile, in.Project.Branch)}), nil
		}
		end, err := w.run(sig)
		if err != nil {
			// The run continues as new (continue.go).
			return RunResult{}, err
		}
		return w.result(end), nil
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
		return EventPage{Events: slices.Clone(w.events[from:]), Next: w.eventBase + len(w.events), Run: workflow.GetInfo(w.ctx).WorkflowExecution.RunID}, nil
	}); err != nil {
		return err
	}
	return workflow.SetQueryHandler(w.ctx, QueryMessages, func(since int) (MessagePage, error) {
		since = min(max(since, 0), len(w.messages))
		return MessagePage{Messages: slices.Clone(w.messages[since:]), Next: len(w.messages)}, nil
	})
}

// run is the loop, to its end or to the boundary where it continues as
// new, which the error returned is.
func (w *loopWF) run(sig workflow.ReceiveChannel) (machine.End, error) {
	answers := workflow.GetSignalChannel(w.ctx, SignalAnswer)
	for {
		w.drain(sig)
		if w.historyFull() && !w.m.Stopping() {
			// The history nears Temporal's limit: no attempt starts,
			// those in flight finish, and with none left the run
			// continues as new.
			if len(w.running) == 0 {
				return machine.End{}, w.continueAsNew(answers)
			}
			if end, stop := w.await(sig, 0); stop {
				return w.stop(end), nil
			}
			continue
		}
		step := w.m.Next(workflow.Now(w.ctx), w.file)
		if end, stop := w.carry(step); stop {
			return w.stop(end), nil
		}
		if step.Asking {
			if end, stop := w.ask(sig, answers); stop {
				return w.stop(end), nil
			}
			continue
		}
		if step.Idle {
			var c Control
			sig.Receive(w.ctx, &c)
			w.apply(c)
			continue
		}
		if end, stop := w.await(sig, step.Wait); stop {
			return w.stop(end), nil
		}
	}
}

// await waits for an attempt in flight to finish, a control signal, or
// wait to pass (0: no timer), and settles the attempt that finished.
func (w *loopWF) await(sig workflow.ReceiveChannel, wait time.Duration) (machine.End, bool) {
	var finished *inflight
	sel := workflow.NewSelector(w.ctx)
	for _, id := range w.m.Running() {
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
		return w.finish(finished)
	}
	return machine.End{}, false
}

// carry carries out a step's effects, each kind one case; it reports
// the end when the step ends the loop or an effect cannot be carried
// out.
func (w *loopWF) carry(s machine.Step) (machine.End, bool) {
	for _, e := range s.Effects {
		switch e.Kind {
		case machine.Start:
			w.begin(e.Task, e.Attempt)
		case machine.Emit:
			w.emit(e.Event)
		case machine.Record:
			// A decision travels as a decision event, which the client
			// following the workflow records in the session's
			// decisions.jsonl as the local recorder does: no command,
			// so a task's decisions cost its history nothing.
			// The machine stamps its records with the time of its input,
			// workflow.Now here.
			w.emit(coordinator.DecisionEvent(e.Decision))
		case machine.Save:
			// The workflow's state is its history; status queries read
			// it.
		case machine.Ask:
			w.asking = e.Question
			w.question = &memory.Question{ID: w.m.Iterations(), Kind: "confirm",
				Text: e.Question, Answers: []string{"y", "n"}, Since: workflow.Now(w.ctx).UTC()}
			w.emit(event.Event{Type: event.Question, Text: e.Question, Question: w.question})
		case machine.Commit:
			// The branch's task file holds no in-progress mark, so only
			// a settled failure writes it (its state and attempts).
			if e.Cause != machine.Settled {
				continue
			}
			if _, err := w.integrate([]TaskUpdate{{ID: e.Task.ID, State: e.State, Attempts: e.Attempt}}); err != nil {
				return machine.End{Reason: "cannot update the task file", IsError: true, Err: err}, true
			}
		case machine.Look:
			// The attempts run in activities on the workers' disks,
			// which the workflow never reports full, so it never waits
			// for space: should a machine carried over ask, there is.
			if end, stop := w.carry(w.m.Space(workflow.Now(w.ctx), true, 0)); stop {
				return end, true
			}
		default:
			panic(fmt.Sprintf("the workflow has no case for the machine's effect %v", e.Kind))
		}
	}
	if s.End != nil {
		return *s.End, true
	}
	return machine.End{}, false
}

// ask waits for the answer to the pending question, a control op, or
// the timeout, after which nobody answered and the default decides.
func (w *loopWF) ask(sig, answers workflow.ReceiveChannel) (machine.End, bool) {
	var ans Answer
	answered, timedOut := false, false
	if len(w.answers) > 0 {
		// An answer the run before this one was sent before it asked.
		ans, answered, w.answers = w.answers[0], true, w.answers[1:]
	}
	tctx, cancel := workflow.WithCancel(w.ctx)
	defer cancel()
	sel := workflow.NewSelector(w.ctx)
	sel.AddReceive(answers, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(w.ctx, &ans)
		answered = true
	})
	sel.AddReceive(sig, func(c workflow.ReceiveChannel, _ bool) {
		var m Control
		c.Receive(w.ctx, &m)
		w.apply(m)
	})
	sel.AddFuture(workflow.NewTimer(tctx, w.askTimeout()), func(workflow.Future) { timedOut = true })
	for !answered && !timedOut && !w.m.Stopping() {
		sel.Select(w.ctx)
	}
	w.asking = ""
	if answered {
		// The client asking at its terminal withdraws its question when
		// the answer came from elsewhere (ralph answer), as a local
		// run's terminal does on the same event.
		word := "no"
		if ans.Yes {
			word = "yes"
		}
		w.emit(event.Event{Type: event.Answered, Question: w.question, Text: word})
	}
	w.question = nil
	if w.m.Stopping() && !answered {
		return machine.End{Reason: decide.ReasonInterrupted, IsError: true}, true
	}
	return w.carry(w.m.Answer(workflow.Now(w.ctx), answered && ans.Yes, answered))
}

func (w *loopWF) askTimeout() time.Duration {
	if w.in.AskTimeout > 0 {
		return w.in.AskTimeout
	}
	return DefaultAskTimeout
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
		w.m.Stop()
	case remote.OpPause:
		w.m.Pause()
	case remote.OpContinue:
		_, _ = w.carry(w.m.Resume(workflow.Now(w.ctx)))
	case remote.OpSay:
		w.messages = append(w.messages, c)
		if len(w.running) > 0 {
			// The attempts in flight read it; none left for the next.
			w.delivered = len(w.messages)
		}
	}
}

func (w *loopWF) emit(ev event.Event) {
	ev.Time = workflow.Now(w.ctx)
	ev.SessionID = w.sessionID
	if ev.AgentID == "" {
		ev.AgentID = event.MainAgent
	}
	w.events = append(w.events, ev)
	if over := len(w.events) - maxEvents; over > 0 {
		w.events = slices.Clone(w.events[over:])
		w.eventBase += over
	}
}

// begin starts attempt number attempt at t on some worker.
func (w *loopWF) begin(t planfile.Task, attempt int) {
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
	last := w.m.LastTry(t.ID)
	in := AttemptInput{Project: w.in.Project, Task: t, Attempt: attempt, Run: w.in.Run, Session: w.in.Session, Prompt: w.in.Prompt,
		SessionID: w.sessionID, MessagesFrom: w.delivered,
		LastError: last.Error, LastSummary: last.Summary, LastVerify: last.Verify}
	w.delivered = len(w.messages)
	w.begun++
	w.running[t.ID] = &inflight{task: t, attempt: attempt, cancel: cancel, fut: workflow.ExecuteActivity(actx, AttemptName, in)}
}

func (w *loopWF) heartbeatTimeout() time.Duration {
	if w.in.HeartbeatTimeout > 0 {
		return w.in.HeartbeatTimeout
	}
	return DefaultHeartbeatTimeout
}

// stop cancels the attempts in flight, waits for each to end (their
// agents are stopped by then), and ends the loop with end.
func (w *loopWF) stop(end machine.End) machine.End {
	ids := w.m.Running()
	for _, id := range ids {
		w.running[id].cancel()
	}
	for _, id := range ids {
		f := w.running[id]
		var out AttemptOutcome
		_ = f.fut.Get(w.ctx, &out)
		delete(w.running, id)
		r := w.report(f, out)
		r.Interrupted = true
		_, _ = w.carry(w.m.Finished(workflow.Now(w.ctx), w.file, machine.Settle(r)))
	}
	return end
}

// report is what an attempt reported, as the settlement takes it
// (machine.Settle). Outcomes from attempts before the settlement name a
// limit by ErrKind alone, a rate limit then, and word a failed
// verification in Failure themselves.
func (w *loopWF) report(f *inflight, out AttemptOutcome) machine.Report {
	if out.Worker != "" {
		w.workedBy[f.task.ID] = out.Worker
	}
	r := machine.Report{Task: f.task, Attempt: f.attempt, Completed: out.Completed, Summary: out.Summary, Err: out.Failure,
		ConfigErr: out.ErrKind == ErrKindConfig, Limit: out.Limit, Verify: out.Verify, VerifyFailed: out.VerifyFailed,
		VerifyOutput: out.VerifyOutput, Usage: out.Usage, Turns: out.Turns, CostUSD: out.CostUSD}
	if r.Limit == nil && out.ErrKind == ErrKindLimit {
		r.Limit = &machine.LimitSeen{Kind: memory.WaitRateLimit, Until: out.LimitUntil}
	}
	if v := out.Verify; v != nil && !v.OK {
		// Failure holds the settled sentence for workflows from before
		// the settlement; this one words it from the run.
		r.Err = ""
	}
	return r
}

// finish settles one attempt: what only the host can (the merge of a
// done task into the branch), with the words and the limit's kind the
// settlement gives, then the machine's bookkeeping. It reports whether
// the loop must stop.
func (w *loopWF) finish(f *inflight) (machine.End, bool) {
	id := f.task.ID
	delete(w.running, id)
	var out AttemptOutcome
	if err := f.fut.Get(w.ctx, &out); err != nil {
		out = AttemptOutcome{Failure: "the attempt was lost: " + err.Error()}
	}
	o := machine.Settle(w.report(f, out))
	if o.Passed() {
		res, err := w.integrate([]TaskUpdate{{ID: id, State: planfile.TaskDone, Attempts: f.attempt, Merge: true,
			Progress: new(o.Progress(workflow.Now(w.ctx), w.sessionID, w.m.Iterations()))}})
		if err != nil {
			return machine.End{Reason: "cannot update the task file", IsError: true, Err: err}, true
		}
		if c := res.Conflicts[id]; c != "" {
			o = o.FailedBy(c, true)
		} else {
			o = o.Counted()
		}
	}
	return w.carry(w.m.Finished(workflow.Now(w.ctx), w.file, o))
}

// integrate runs the integration activity, the target branch's only
// writer, and takes the task file it returns.
func (w *loopWF) integrate(updates []TaskUpdate) (IntegrateResult, error) {
	ctx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    w.heartbeatTimeout(),
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
	in := IntegrateInput{Project: w.in.Project, Updates: updates, SessionID: w.sessionID}
	if w.short && w.file != nil {
		in.Base = taskHash(w.text)
	}
	var res IntegrateResult
	if err := workflow.ExecuteActivity(ctx, IntegrateName, in).Get(w.ctx, &res); err != nil {
		return res, fmt.Errorf("integrating into %s: %w", w.in.Project.Branch, err)
	}
	if res.Diff != nil {
		text, err := res.Diff.apply(w.text)
		if err != nil {
			return res, fmt.Errorf("integrating into %s: %w", w.in.Project.Branch, err)
		}
		w.text = text
	} else {
		w.text = res.Tasks
	}
	w.file = planfile.ParseTasks([]byte(w.text))
	return res, nil
}

func (w *loopWF) status() Status {
	b := w.m.Breaker()
	st := Status{WorkflowID: workflow.GetInfo(w.ctx).WorkflowExecution.ID, SessionID: w.sessionID, Status: memory.StatusRunning, Running: slices.Sorted(slices.Values(w.m.Running())),
		Done: w.m.Done(), Failed: w.m.Failed(), Iterations: w.m.Iterations(), Breaker: b.Record(), CostUSD: w.m.Cost()}
	switch {
	case w.m.Stopping():
		st.Status = "stopping"
	case w.m.Paused():
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
		ft := remote.FleetTask{ID: t.ID, Title: t.Title, State: t.State, Attempt: max(t.Attempts, w.m.Attempt(t.ID)), Worker: w.workedBy[t.ID]}
		if f, ok := w.running[t.ID]; ok {
			ft.State, ft.Attempt, ft.Worker = planfile.TaskInProgress, f.attempt, ""
		}
		out = append(out, ft)
	}
	return out
}

func (w *loopWF) result(r machine.End) RunResult {
	res := RunResult{Reason: r.Reason, IsError: r.IsError, SessionID: w.sessionID}
	if w.m != nil {
		res.Done, res.Failed, res.Iterations, res.Usage, res.CostUSD = w.m.Done(), w.m.Failed(), w.m.Iterations(), w.m.Usage(), w.m.Cost()
	}
	if r.Err != nil {
		res.Error = r.Err.Error()
	}
	if w.file != nil {
		res.Counts = w.file.Counts()
	}
	return res
}
