package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/temporal"
)

// The commands' side of a run on Temporal: what they print and the exit
// codes. Starting ralph-temporal, following it and recording its session
// are scripts/temporal's.

// runTemporal starts (or attaches to) the project's run on Temporal and
// follows it like a local run: the same events to the face, the same
// result and exit codes. An interrupt stops the run on every worker.
func runTemporal(ctx context.Context, face *OneShot, t temporal.Run) int {
	started := false
	defer func() {
		if started {
			face.Close()
		}
	}()
	handle := face.Handle
	if t.Start.Ask {
		a := &temporalAsker{ctx: ctx, confirm: face.Confirmer(), notify: face.Notify, run: t, stderr: face.Stderr}
		defer a.stop()
		handle = func(ev event.Event) {
			face.Handle(ev)
			a.event(ev)
		}
	}
	o, err := t.Exec(ctx, face.Stderr, func() { started = true; face.Start() }, handle)
	switch {
	case errors.Is(err, temporal.ErrNoBinary) || errors.Is(err, temporal.ErrNoAddress):
		return face.Fail(ExitUsage, err)
	case err != nil:
		return face.Fail(ExitFailed, err)
	case o.Result == nil:
		return face.Fail(o.ExitCode, fmt.Errorf("the run on Temporal gave no result (ralph-temporal exited %d)", o.ExitCode))
	}
	res := o.Result
	// The workflow reports its session's figures; what an earlier run of
	// it spent is not told apart here.
	return face.FinishLoop(o.LoopResult(), res.SessionID, o.Took, res.Usage, memory.State{}, res.Counts)
}

// TemporalMarker reports whether the project's run is on Temporal, and
// how to reach it (temporal.ReadMarker).
func (r Records) TemporalMarker() (remote.Marker, bool) {
	return temporal.ReadMarker(r.Fs, r.Root)
}

// SteerTemporal is ralph stop, say, pause, continue and answer for a run on
// Temporal: a signal to its workflow.
func (r Records) SteerTemporal(ctx context.Context, m remote.Marker, req control.Request) int {
	done, err := temporal.Steer(ctx, r.Root, m, req, r.Err)
	switch {
	case errors.Is(err, temporal.ErrNotSteerable) || errors.Is(err, temporal.ErrNoBinary):
		fmt.Fprintln(r.Err, "ralph: "+err.Error())
		return ExitUsage
	case err != nil:
		return ExitFailed // ralph-temporal said why on stderr
	}
	if r.JSON {
		_ = r.writeJSON(control.Done("%s", done))
	} else {
		fmt.Fprintln(r.Out, done)
	}
	return ExitOK
}

// StatusTemporal is ralph status for a run on Temporal: its workflow's
// status query.
func (r Records) StatusTemporal(ctx context.Context, m remote.Marker) error {
	out, err := temporal.Status(ctx, r.Root, m, r.Err)
	if err != nil {
		return err
	}
	if r.JSON {
		_, err = r.Out.Write(out)
		return err
	}
	return temporal.WriteStatus(r.Out, m, out)
}

// WatchTemporal is ralph watch for a run on Temporal: its events as they
// come (stream-json with jsonOut), until it ends.
func (r Records) WatchTemporal(ctx context.Context, m remote.Marker, jsonOut bool) error {
	js := r.newJSONWatch()
	return temporal.Attach(ctx, r.Root, m, r.Err, func(ev event.Event) {
		switch {
		case jsonOut:
			js.Event(ev)
		case ev.Text != "":
			fmt.Fprintf(r.Out, "%s %s\n", ev.Time.Local().Format(time.TimeOnly), text.StripControls(ev.Text))
		}
	})
}

// temporalAsker asks the workflow's question at the terminal following
// the run, with the words a local run asks it in (the face's Confirmer),
// and sends the answer as the workflow's answer signal. ralph answer
// from another terminal answers the workflow too; its answered event
// withdraws the question here, as a local run's terminal is withdrawn.
type temporalAsker struct {
	ctx context.Context
	// confirm asks at the terminal; nil without one, when notify says
	// how to answer from another terminal, as a local run's note does.
	confirm func(context.Context, string) bool
	notify  func(string)
	run     temporal.Run
	stderr  io.Writer

	// cancel withdraws the question being asked (nil: none); wg waits
	// for its goroutine, which stop owns.
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// event is called for each of the run's events, in order, from one
// goroutine.
func (a *temporalAsker) event(ev event.Event) {
	switch {
	case ev.Type == event.Question && ev.Question != nil && ev.Question.Kind == "confirm":
		a.ask(*ev.Question)
	case ev.Type == event.Answered:
		a.withdraw()
	}
}

// ask shows the workflow's question q where the person is: at the
// terminal, whose answer goes to the workflow as its answer signal, or
// as the note of how to answer from another terminal.
func (a *temporalAsker) ask(q memory.Question) {
	a.withdraw()
	if a.confirm == nil {
		a.notify(control.WaitingNote(q, a.run.Start.AskTimeout))
		return
	}
	qctx, cancel := context.WithCancel(a.ctx)
	a.cancel = cancel
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		yes := a.confirm(qctx, q.Text)
		if qctx.Err() != nil {
			return // answered elsewhere, or the run is over
		}
		// The signal is sent under the run's context: the answered
		// event it brings withdraws qctx, which must not cut it.
		if err := a.run.Answer(a.ctx, yes, a.stderr); err != nil {
			fmt.Fprintln(a.stderr, "ralph: cannot answer the run's question: "+err.Error())
		}
	}()
}

// withdraw ends the question being asked, if any, and waits for it.
func (a *temporalAsker) withdraw() {
	if a.cancel != nil {
		a.cancel()
		a.cancel = nil
	}
	a.wg.Wait()
}

// stop withdraws the question when the run is over.
func (a *temporalAsker) stop() { a.withdraw() }
