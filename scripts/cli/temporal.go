package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
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
	o, err := t.Exec(ctx, face.Stderr, func() { started = true; face.Start() }, face.Handle)
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

// SteerTemporal is ralph stop, say, pause and continue for a run on
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
	return temporal.Attach(ctx, r.Root, m, r.Err, func(ev coordinator.Event) {
		switch {
		case jsonOut:
			js.Event(ev)
		case ev.Text != "":
			fmt.Fprintf(r.Out, "%s %s\n", ev.Time.Local().Format(time.TimeOnly), text.StripControls(ev.Text))
		}
	})
}
