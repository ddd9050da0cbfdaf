package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// Worker works one task of RALPH_TASKS.md: a child agent of the
// coordinator, or an external CLI agent.
type Worker interface {
	Work(ctx context.Context, a Assignment) Outcome
}

// Outcome is what one attempt at a task came to.
type Outcome struct {
	// Completed: the worker claims the task is done (complete_task, or the
	// completion marker of an external agent). Verification may still fail.
	Completed bool
	Summary   string
	Err       error
	Usage     conversation.Usage
	CostUSD   *float64
	// Turns are the model turns the worker took (0 when it cannot tell,
	// as for an external agent); the session counts them across tasks.
	Turns int
	// Written are the paths the attempt's file tools were asked to
	// write when nothing else can have changed a file
	// (event.Result.Written); nil when anything may have, as for
	// an external agent.
	Written []string
}

// Error policies for a failed attempt.
const (
	OnErrorRetry = decide.OnErrorRetry
	OnErrorSkip  = decide.OnErrorSkip
	OnErrorAbort = decide.OnErrorAbort
)

// ReviewFunc reviews an attempt that passed verify: "" when its work may
// count, otherwise why not.
type ReviewFunc func(ctx context.Context, t planfile.Task, attempt int, ws Workspace, verify string) string

// Options configures the task loop.
type Options struct {
	Fs   afero.Fs
	Root string
	// Door is the session's door for what enters a request (memory/kept):
	// the state files a task's brief quotes are read through it.
	Door *kept.Door
	// Tasks is the plan the loop works (planfile.OpenTracker); nil is
	// RALPH_TASKS.md in Root.
	Tasks  planfile.Tracker
	Worker Worker
	// Policy is what the loop's decisions follow, shared with the
	// workflow on Temporal: iterations, parallel tasks, what a failure
	// leads to, retries and their backoff, the breaker's cooldown.
	decide.Policy
	// MaxCost stops the loop once the known cost reaches it (0: no limit).
	MaxCost float64
	// Until stops the loop, successfully, once it holds.
	Until Condition
	// Breaker pauses the loop when it holds (nil: DefaultBreaker). Ask is
	// asked whether to go on; without Ask the breaker opens for
	// BreakerCooldown (default DefaultBreakerCooldown), then lets one task
	// through, closing when it succeeds and opening again for twice as
	// long when it fails (see breaker.go).
	Breaker Condition
	Ask     func(ctx context.Context, question string) bool
	// MaxWait bounds how long the loop waits for a rate or usage limit to
	// reset (see limitwait.go); an attempt stopped by a limit further off,
	// or any limit when MaxWait is 0, fails as any other.
	MaxWait time.Duration
	// Review, when set, reviews an attempt that passed verify before it
	// counts (ralph run --review task): "" when the work may count,
	// otherwise why not, which fails the attempt.
	Review ReviewFunc
	// VerifyCommands must pass, in order, for a claimed completion to
	// count: the run's --verify (or the plan's validation commands). A
	// task's own verify command (TaskFile.Verify) runs after them. Verify
	// runs one of them in the attempt's workspace; a command that could
	// not run (not found, timed out) does not pass.
	VerifyCommands []string
	Verify         func(ctx context.Context, ws Workspace, command string) (ok bool, output string)
	// Git, when set, checkpoints every attempt and keeps done tasks'
	// work as configured (see TaskGit).
	Git   TaskGit
	Queue *interrupts.Queue
	Store coordinator.Store
	// Undelivered, if set, takes the messages for the loop's agents
	// (ralph say) that none read; the loop reports them when it ends.
	Undelivered func() []interrupts.Interrupt
	// Notify, if set, is told one sentence about each thing the loop did
	// to the task file that a person should know of, such as a duplicate
	// id it replaced. The same sentence goes to decisions.jsonl.
	Notify func(notice string)
	// Events receives the loop's events; give it the coordinator's broker
	// (Coordinator.Events) so its children's events and the loop's form
	// one stream. nil publishes to nobody.
	Events *pubsub.Broker[event.Event]
	// RecordErr, if set, tells whether the session's record could not be
	// written (Recording.Err); the loop checks it before it reports.
	RecordErr func() error
	// SessionID is put on events and progress entries.
	SessionID string
	// Control, if set, pauses and resumes the loop from outside.
	Control *Control
	// Prior continues a resumed session's counters.
	Prior *memory.State
	// Redactor takes secrets out of the progress entries the loop writes
	// (nil: none).
	Redactor *memory.Redactor
	// Prompt is the person's prompt template (--prompt-template); nil
	// means ralph's own prompt.
	Prompt *taskprompt.Template
}

// DefaultBreaker trips after three attempts in a row that completed no task,
// or the same error three times in a row.
func DefaultBreaker(s Stats) (bool, error) {
	return s.NoProgress >= 3 || s.SameErrorRepeats >= 3, nil
}

// Loop end reasons.
const (
	ReasonAllDone       = decide.ReasonAllDone
	ReasonSomeFailed    = decide.ReasonSomeFailed
	ReasonUntil         = decide.ReasonUntil
	ReasonMaxIterations = decide.ReasonMaxIterations
	ReasonMaxCost       = decide.ReasonMaxCost
	ReasonBreaker       = decide.ReasonBreaker
	ReasonAborted       = decide.ReasonAborted
	ReasonInterrupted   = decide.ReasonInterrupted
	ReasonStuck         = decide.ReasonStuck
	ReasonNotSaved      = "the session record could not be saved"
	ReasonConfig        = "the model is configured wrongly"
)

// Result is how a task loop ended.
type Result struct {
	Stats   Stats     `json:"stats"`
	Reason  string    `json:"reason"`
	Done    []string  `json:"done"`
	Failed  []string  `json:"failed"`
	IsError bool      `json:"is_error"`
	Err     error     `json:"-"`
	Signal  os.Signal `json:"-"`
}

type attemptDone struct {
	task    planfile.Task
	attempt int
	ws      Workspace
	out     Outcome
	// checks are the verify commands that decide the attempt, as its
	// agent was told.
	checks []string
}

// loop is the goroutine host of one Run call: the machine
// (coordinator/loop/machine) holds the loop's bookkeeping and decides;
// the host runs the attempts on goroutines, keeps the task file, git,
// verify, review and the full-disk waits, and carries out the machine's
// effects.
type loop struct {
	o     Options
	m     *machine.Machine
	start time.Time
	// running are the tasks in flight, id to title, for the task file's
	// id assignment (updateTasks).
	running map[string]string
	file    *planfile.TaskFile // as of the last refresh
	counts  memory.TaskCounts  // as of the last refresh
	res     Result
	// over: the loop ended; its last save holds no wait or breaker.
	over bool
	// pausing: the loop is paused with tasks in flight, as last saved.
	pausing bool
	// storeErr is the first record that could not be saved. Only the
	// loop's own goroutine touches it: workers never write the record.
	storeErr error
	// diskErr is the last record a full disk kept from being saved,
	// reopen the tasks it left marked in progress, and unmarked the tasks
	// done whose entry is written but whose mark it kept from the task
	// file (see diskwait.go).
	diskErr       error
	reopen        []string
	unmarked      []doneAttempt
	diskRecovered bool
	// diskDir is a directory on the file system the wait is for (the
	// failed file's), which the wait watches for space.
	diskDir string
	// pending is the machine's latest save, not yet made (flushSave).
	pending *pendingSave
}

// Run works through RALPH_TASKS.md until every task is done or failed,
// a stop condition holds, a limit is reached, or a hard stop arrives. It
// saves the session at every task boundary. When it returns, every
// subscriber has handled every event of the loop.
func Run(ctx context.Context, o Options) Result {
	if o.Tasks == nil {
		tr, err := planfile.OpenTracker(o.Fs, o.Root, "")
		if err != nil {
			return Result{Reason: "cannot read the task file", IsError: true, Err: err}
		}
		o.Tasks = tr
	}
	o.Policy = o.Policy.WithDefaults()
	if o.Breaker == nil {
		o.Breaker = DefaultBreaker
	}
	if o.Queue == nil {
		o.Queue = interrupts.NewQueue()
	}
	if o.Events == nil {
		o.Events = pubsub.NewBroker[event.Event]()
	}
	start := time.Now()
	l := &loop{o: o, start: start, running: map[string]string{},
		m: machine.New(machine.Config{Policy: o.Policy, MaxCost: o.MaxCost, MaxWait: o.MaxWait, Until: o.Until, Breaker: o.Breaker,
			CanAsk: o.Ask != nil, Prior: o.Prior}, start)}
	o.Control.begin()
	defer o.Control.end()
	l.res = l.run(ctx)
	// A task done whose mark a full disk held back is marked now if it
	// can be; otherwise the next run's recovery marks it from its entry.
	l.markUnmarked()
	l.closeGit(ctx)
	l.res.Done, l.res.Failed = l.m.Done(), l.m.Failed()
	l.res.Stats = l.stats()
	// A record lost during the run makes the run a failure, and its final
	// status says so; a failure of that final save is caught after it.
	l.failIfNotSaved()
	l.over = true
	status := memory.StatusCompleted
	switch {
	case l.res.Reason == ReasonInterrupted:
		status = memory.StatusInterrupted
	case l.res.IsError:
		status = memory.StatusFailed
	}
	l.save(status, "")
	l.failIfNotSaved()
	l.reportUndelivered()
	// The loop's last event says how it ended, as a run's result does.
	final := l.res.Final(o.SessionID, time.Since(l.start), l.m.Usage(), memory.State{}, l.counts)
	l.emit(event.Event{Type: event.RunResult, Result: &final})
	// As with Coordinator.Run: the face reports once the loop returns.
	_ = o.Events.Flush(context.WithoutCancel(ctx))
	return l.res
}

// keep remembers the first error saving the session record. The loop goes
// on, since the work matters more than its log, but the result reports it.
func (l *loop) keep(err error) {
	if memory.IsDiskFull(err) {
		// The loop waits for space, as for every other write a full
		// disk refused, and writes its state again then (holdForDisk);
		// failIfNotSaved reports it if no save after the wait cleared
		// it, or when --max-wait 0 says the loop never waits.
		l.diskErr = err
		if !l.over && l.o.MaxWait > 0 {
			l.pauseForDisk(err)
		}
		return
	}
	if err != nil && l.storeErr == nil {
		l.storeErr = err
	}
}

// failIfNotSaved turns the result into an error if any record was lost, so
// a run whose record is incomplete does not look clean.
func (l *loop) failIfNotSaved() {
	if l.o.RecordErr != nil {
		// Events the recorder could not append while the disk was full
		// are lost, but the run waited for space and its state was
		// saved whole after: that is no record lost.
		if err := l.o.RecordErr(); !(l.diskRecovered && memory.IsDiskFull(err)) {
			l.keep(err)
		}
	}
	if l.storeErr == nil && l.diskErr != nil {
		l.storeErr = memory.ExplainDiskFull(l.diskErr, l.o.Root)
	}
	if l.storeErr == nil {
		return
	}
	err := fmt.Errorf("%s: %w", ReasonNotSaved, l.storeErr)
	switch {
	case !l.res.IsError:
		l.res.Reason, l.res.IsError, l.res.Err = ReasonNotSaved, true, err
	case !errors.Is(l.res.Err, l.storeErr):
		l.res.Err = errors.Join(l.res.Err, err)
	}
}

func (l *loop) emit(ev event.Event) {
	ev.Time = time.Now()
	ev.SessionID = l.o.SessionID
	if ev.AgentID == "" {
		ev.AgentID = event.MainAgent
	}
	coordinator.Publish(l.o.Events, ev)
}

// decide records a choice the host made on its own (a full disk, git, a
// task's id): a decision event, which the recorder writes to
// decisions.jsonl (a write that fails reaches the result through
// RecordErr). The machine's decisions come as its Record effects.
func (l *loop) decide(d memory.DecisionRecord) {
	if d.Turn == 0 {
		d.Turn = l.m.Iterations()
	}
	l.emit(coordinator.DecisionEvent(d))
}

func (l *loop) run(ctx context.Context) Result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &host{l: l, ctx: ctx, results: make(chan attemptDone)}
	// stop ends the loop: in-flight attempts are cancelled and awaited, so
	// no worker outlives Run, and their tasks go back to open.
	stop := func(r Result) Result {
		cancel()
		for h.inflight > 0 {
			d := <-h.results
			h.inflight--
			l.finishInterrupted(ctx, d)
		}
		return r
	}
	for {
		if it, ok := l.o.Queue.PopAtMost(interrupts.HardStop); ok {
			// Who stopped the loop (Ctrl-C, ralph stop, the stop button
			// of ralph serve's page): its agents only see their work
			// cancelled.
			l.emit(event.Event{Type: event.Interrupted, Text: interrupts.StopReason(it)})
			return stop(Result{Reason: ReasonInterrupted, IsError: true, Signal: it.Signal})
		}
		if ctx.Err() != nil {
			return stop(Result{Reason: ReasonInterrupted, IsError: true})
		}
		f, err := l.boundary()
		if err != nil {
			return stop(Result{Reason: "cannot read the task file", IsError: true, Err: err})
		}
		l.file = f
		paused := l.o.Control.Paused()
		l.markPausing(paused, h.inflight)
		if paused {
			l.m.Pause()
		} else if r, end := h.carry(l.m.Resume(time.Now()), f); end {
			return stop(r)
		}
		step := l.m.Next(time.Now(), f)
		if r, end := h.carry(step, f); end {
			return stop(r)
		}
		// Whatever waits next, the state is saved before.
		l.flushSave()
		if step.Idle {
			select {
			case <-l.o.Control.changed():
			case <-l.o.Queue.Ready():
			case <-ctx.Done():
			}
			continue
		}
		if h.inflight == 0 {
			if step.Wait > 0 {
				l.sleep(ctx, step.Wait)
			}
			continue
		}
		// Wake when a wait ends, to start tasks beside those in flight.
		var wake <-chan time.Time
		var timer *time.Timer
		if step.Wait > 0 {
			timer = time.NewTimer(step.Wait)
			wake = timer.C
		}
		select {
		case d := <-h.results:
			h.inflight--
			if ctx.Err() != nil {
				l.finishInterrupted(ctx, d)
			} else if r, stopNow := h.finish(d); stopNow {
				if timer != nil {
					timer.Stop()
				}
				return stop(r)
			}
		case <-l.o.Queue.Ready():
		case <-l.o.Control.changed():
		case <-wake:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// sleep waits for d, a hard stop or ctx; it reports whether d passed.
func (l *loop) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.o.Queue.Ready():
	case <-l.o.Control.changed():
	case <-ctx.Done():
	}
	return false
}

// stoppedMeta is the task's meta key that counts its attempts a stop cut
// short.
const stoppedMeta = "stopped"

// stoppedAttempts is how many of t's attempts a stop cut short, as its
// record says; they are waived from its retry budget like those a limit
// cut short.
func stoppedAttempts(t planfile.Task) int {
	n, err := strconv.Atoi(t.Meta[stoppedMeta])
	if err != nil || n < 0 {
		return 0
	}
	return min(n, t.Attempts)
}

// finishInterrupted puts a task cut short by a stop back to open.
func (l *loop) finishInterrupted(ctx context.Context, d attemptDone) {
	delete(l.running, d.task.ID)
	l.ended(ctx, d, false)
	r := reported(d)
	r.Interrupted = true
	h := &host{l: l, ctx: ctx}
	_, _ = h.carry(l.m.Finished(time.Now(), l.file, machine.Settle(r)), l.file)
}

// finish settles one attempt: what only the host can (verify, review,
// git, the durable record of a completion, a full disk), with the words
// and the limit's kind machine.Settle gives, then the machine's
// bookkeeping. It reports whether the loop must stop.
func (h *host) finish(d attemptDone) (Result, bool) {
	l, ctx := h.l, h.ctx
	delete(l.running, d.task.ID)
	t, out := d.task, d.out
	r := reported(d)
	if r.ConfigErr {
		l.ended(ctx, d, false)
		if l.o.Store != nil {
			l.keep(l.o.Store.AppendLog(memory.ErrorsLog, memory.ErrorRecord{Time: time.Now().UTC(), Kind: "config", Turn: l.m.Iterations(), Message: t.ID + ": " + out.Err.Error()}))
		}
		res, stop := h.settle(machine.Settle(r))
		if res.Reason == ReasonConfig {
			res.Err = out.Err
		}
		return res, stop
	}
	if r.Limit != nil {
		// A limit cut the attempt short: the machine waits for it to
		// reset, unless it is further off than the loop may wait.
		l.ended(ctx, d, false)
		return h.settle(machine.Settle(r))
	}
	var verifyOut string
	if r.Err == "" && r.Completed && len(d.checks) > 0 {
		var failed string
		r.Verify, verifyOut, failed = l.verify(ctx, d.ws, d.checks)
		r.VerifyOutput, r.VerifyFailed = verifyOut, failed
		l.emit(verified(d, r.Verify, failed))
	}
	o := machine.Settle(r)
	verify := r.Verify
	l.ended(ctx, d, verify != nil)
	if l.diskFull(out.Err, o.Failure) {
		// A full disk is no failure of the task: the machine waits for
		// space (or, with --max-wait 0, fails the attempt).
		cause := out.Err
		if cause == nil {
			cause = errors.New(o.Failure)
		}
		return h.settle(o.OnFullDisk(l.fullDisk(cause)))
	}
	if o.Passed() && l.o.Review != nil {
		// Reviewers read the finished work before it counts; what they
		// confirm is fixed, and what is left fails the attempt.
		if failure := l.o.Review(ctx, t, d.attempt, d.ws, verifyOut); failure != "" {
			o = o.FailedBy(failure, false)
		}
	}
	if o.Passed() {
		kept, failure, final := l.keepWork(ctx, d)
		if failure == "" {
			return l.complete(doneAttempt{d, verify}, o, kept)
		}
		o = o.FailedBy(failure, final)
	}
	if l.o.Store != nil {
		l.keep(l.o.Store.AppendLog(memory.ErrorsLog, memory.ErrorRecord{Time: time.Now().UTC(), Kind: "task", Turn: l.m.Iterations(), Message: t.ID + ": " + o.Failure}))
	}
	return h.settle(o)
}
