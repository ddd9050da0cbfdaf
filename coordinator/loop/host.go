package loop

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// This file is where the goroutine host carries out the task-loop
// machine's effects, one case per kind: the attempts it starts run on
// goroutines, its records go through the event stream to the session's
// recorder, and its commits are writes of the task file.

// host carries out the machine's effects for one run. It owns the
// attempts' goroutines: each ends once it has handed its result over on
// results, and the run's stop waits for every one still in flight.
type host struct {
	l        *loop
	ctx      context.Context
	results  chan attemptDone
	inflight int
}

// carry carries out a step's effects, each kind one case, and reports
// the loop's end when the step ends it or an effect cannot be carried
// out. f is the task file the step was decided on.
func (h *host) carry(s machine.Step, f *planfile.TaskFile) (Result, bool) {
	l := h.l
	skip := false // the effects of a start that did not happen
	// An attempt's goroutine starts once its start is told (the event,
	// the decision, the saved state), so nothing of its agent comes
	// before them; at the latest when the step's effects are done.
	var launch func()
	defer func() {
		if launch != nil {
			l.flushSave()
			launch()
		}
	}()
	for _, e := range s.Effects {
		if skip && e.Kind != machine.Start {
			continue
		}
		skip = false
		switch e.Kind {
		case machine.Start:
			if launch != nil {
				l.flushSave()
				launch()
			}
			var r Result
			var stop bool
			launch, r, stop = h.begin(e.Task, e.Attempt, f)
			if stop {
				return r, true
			}
			skip = launch == nil
		case machine.Emit:
			l.emit(e.Event)
		case machine.Record:
			l.emit(coordinator.DecisionEvent(e.Decision))
		case machine.Save:
			// Saved before an attempt starts or the loop waits
			// (flushSave): a task's end and the next one's start, a
			// moment apart, are one save.
			l.pending = &pendingSave{status: e.Status, current: e.Current}
		case machine.Ask:
			yes := l.o.Ask(h.ctx, e.Question)
			if r, stop := h.carry(l.m.Answer(time.Now(), yes, true), f); stop {
				return r, true
			}
		case machine.Commit:
			if r, stop := l.commit(e); stop {
				return r, true
			}
		case machine.Look:
			free, again := l.lookForSpace()
			if r, stop := h.carry(l.m.Space(time.Now(), free, again), f); stop {
				return r, true
			}
		default:
			panic(fmt.Sprintf("the loop has no case for the machine's effect %v", e.Kind))
		}
	}
	if s.End != nil {
		return Result{Reason: s.End.Reason, IsError: s.End.IsError, Err: s.End.Err}, true
	}
	return Result{}, false
}

// begin marks a task in progress, counting the attempt, and returns what
// runs it on a goroutine (nil when it did not start), or the loop's end
// when the task file cannot be written.
func (h *host) begin(t planfile.Task, attempt int, f *planfile.TaskFile) (func(), Result, bool) {
	l := h.l
	_, err := l.updateTasks(&t, func(f *planfile.TaskFile) error {
		return f.StartAttempt(t.ID, attempt)
	})
	switch {
	case err != nil && memory.IsDiskFull(err):
		l.m.NotStarted(t.ID)
		if l.o.MaxWait <= 0 {
			return nil, l.noDiskWait(err), true
		}
		l.pauseForDisk(err)
		return nil, Result{}, false
	case errors.Is(err, planfile.ErrTaskTaken):
		// Another worker claimed it first (a Beads plan): the next
		// boundary shows it in progress.
		l.m.NotStarted(t.ID)
		return nil, Result{}, false
	case err != nil:
		l.m.NotStarted(t.ID)
		return nil, Result{Reason: "cannot update the task file", IsError: true, Err: err}, true
	}
	l.running[t.ID] = t.Title
	h.inflight++
	a := l.assign(f, t, attempt)
	ctx := h.ctx
	return func() {
		go func() {
			d := attemptDone{task: t, attempt: attempt, checks: a.checks}
			var err error
			if d.ws, err = l.prepare(ctx, t, attempt); err != nil {
				d.out.Err = err
			} else {
				a.Workspace = d.ws
				d.out = l.o.Worker.Work(ctx, a)
			}
			h.results <- d
		}()
	}, Result{}, false
}

// commit writes a task's new state as the machine settled it.
func (l *loop) commit(e machine.Effect) (Result, bool) {
	t := e.Task
	switch e.Cause {
	case machine.StopCut:
		// The attempt keeps its number (attempts=N stays, so the
		// progress mark of an attempt, which says which one completed,
		// is never taken for another), and is counted as stopped
		// (stopped=K): a person's stop, or the run's own limit, is no
		// failure of the task, so it spends none of its --retries when
		// the run goes on (stoppedAttempts).
		_, err := l.updateTasks(&t, func(f *planfile.TaskFile) error {
			if err := f.SetState(t.ID, planfile.TaskOpen); err != nil {
				return err
			}
			return f.SetMeta(t.ID, stoppedMeta, strconv.Itoa(stoppedAttempts(t)+1))
		})
		// A task a person deleted meanwhile needs no reset. Any other
		// failure leaves the task in progress: the next run resets it,
		// but the record is wrong until then, so the run reports it.
		if !errors.Is(err, planfile.ErrTaskNotFound) {
			l.keep(err)
		}
	case machine.ConfigCut:
		// The task goes back to open, not failed, with the attempts it
		// had before, since it was never really tried.
		attempts := ""
		if e.Attempt > 0 {
			attempts = strconv.Itoa(e.Attempt)
		}
		if _, err := l.updateTasks(&t, func(f *planfile.TaskFile) error {
			if err := f.SetState(t.ID, planfile.TaskOpen); err != nil {
				return err
			}
			return f.SetMeta(t.ID, "attempts", attempts)
		}); err != nil {
			return Result{Reason: "cannot update the task file", IsError: true, Err: err}, true
		}
	case machine.DiskCut:
		// While nothing can be written the task stays in progress, and
		// the wait puts it back to open once there is space.
		if _, err := l.updateTasks(&t, func(f *planfile.TaskFile) error { return f.SetState(t.ID, planfile.TaskOpen) }); memory.IsDiskFull(err) {
			l.reopen = append(l.reopen, t.ID)
		} else if err != nil && !errors.Is(err, planfile.ErrTaskNotFound) {
			l.keep(err)
		}
	case machine.LimitCut:
		if _, err := l.updateTasks(&t, func(f *planfile.TaskFile) error { return f.SetState(t.ID, planfile.TaskOpen) }); err != nil &&
			!errors.Is(err, planfile.ErrTaskNotFound) {
			l.keep(err)
		}
	default:
		if _, err := l.updateTasks(&t, func(f *planfile.TaskFile) error { return f.SetState(t.ID, e.State) }); err != nil {
			if memory.IsDiskFull(err) && l.o.MaxWait <= 0 {
				// The task stays marked in progress, which the next
				// ralph puts back to open.
				return l.noDiskWait(err), true
			}
			if memory.IsDiskFull(err) {
				// The task stays marked in progress until there is
				// space; the wait reopens it then.
				l.reopen = append(l.reopen, t.ID)
				l.pauseForDisk(err)
				return Result{}, false
			}
			return Result{Reason: "cannot update the task file", IsError: true, Err: err}, true
		}
	}
	return Result{}, false
}

// reported is what an attempt reported, verify's run aside.
func reported(d attemptDone) machine.Report { return Reported(d.task, d.attempt, d.out) }

// settle hands an attempt's outcome to the machine and carries out what
// it decides.
func (h *host) settle(o machine.Outcome) (Result, bool) {
	f := h.l.file
	if nf, err := h.l.o.Tasks.Load(); err == nil {
		f = nf
	}
	return h.carry(h.l.m.Finished(time.Now(), f, o), f)
}
