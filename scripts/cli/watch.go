package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/scripts/screen/view"
	"github.com/ralph-dev/ralph/scripts/watch"
)

// WatchHelp is the help of ralph watch.
const WatchHelp = `Watch the ralph running in this project from another terminal: its mode and
status, the task it works on and for how long, each agent and what it is
doing, the last events, tokens and cost, the tasks done, open and failed, and
the question it waits on, if any, with the command that answers it. The view
follows the run's event stream through its control socket and is redrawn
within 200 ms of each event. It ends when the run ends, with the exit code
the run has (0 done, 1 failed, 130 stopped; ralph run's codes); q quits it
at once (exit 0) when its input is a terminal. The task counts are ralph
status's.

With no ralph running it shows the project's last session; in a project where
nothing has run yet, it waits for a ralph to start. A ralph that works
here without a control socket (an older one) is followed through its
events.jsonl.

--json prints the events instead, one JSON object a line, as
--output-format stream-json prints them: the session's events so far, then
each new one as it happens, none lost and none twice.`

// watchSink is what a watch shows the events on: the view for people, or
// stream-json lines.
type watchSink interface {
	// Begin says which session is watched; live is false when it is read
	// from its files.
	Begin(sessionID string, live bool)
	Event(ev event.Event)
	// End says the watch is over: the run ended, or there is nothing more.
	End()
}

// watchPoll is how often the files of a ralph without a socket are read.
var watchPoll = 100 * time.Millisecond

// Watch follows the ralph running in the project: through its control
// socket when it has one, its events.jsonl otherwise; with none running,
// the last session is shown as it ended. A watch that followed a run
// exits as the run did (runEnd); q at its terminal quits it (exit 0),
// Ctrl-C or SIGTERM there end it with 130 or 143.
func (r Records) Watch(ctx context.Context, jsonOut bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var sink watchSink
	signalCode := func() int { return 0 }
	var quit atomic.Bool
	if jsonOut {
		sink = r.newJSONWatch()
	} else {
		stopKeys := watch.Keys(r.Term.In, func() { quit.Store(true); cancel() })
		if r.Term.InTTY {
			var stopSignals func()
			signalCode, stopSignals = watch.Signals(ctx, cancel)
			defer stopSignals()
		}
		defer stopKeys()
		v := watch.NewView(r.Fs, r.Root, r.Term, r.Out)
		v.Keys = r.Term.InTTY && terminal.OneKey
		defer v.Close()
		sink = v
	}
	end := &runEnd{}
	id, err := r.watch(ctx, sink, end)
	if err != nil || quit.Load() {
		return err
	}
	if code := signalCode(); code != 0 {
		return exit(code)
	}
	return exit(end.code(r.Fs, r.Root, id))
}

// watch follows the run, or shows the last session, and says which.
func (r Records) watch(ctx context.Context, sink watchSink, end *runEnd) (string, error) {
	st, err := r.watchRalph(ctx)
	if errors.Is(err, control.ErrNotRunning) && !r.hasSession() {
		// Started before the run it is meant for: wait for it.
		st, err = r.waitForRun(ctx)
		if st == nil && err == nil {
			return "", nil // left before anything ran
		}
	}
	switch {
	case err == nil:
		defer st.Close()
		end.followed = true
		return st.Hello.SessionID, r.watchLive(ctx, st, sink, end)
	case errors.Is(err, control.ErrNotRunning):
		id, err := memory.FindSession(r.Fs, r.Root, "")
		if err != nil {
			return "", fmt.Errorf("nothing to watch: %w", err)
		}
		return id, r.watchFiles(ctx, sink, id, true, end)
	}
	return "", err
}

// watchRalph joins the event stream of the ralph the control commands
// reach (findRalph).
func (r Records) watchRalph(ctx context.Context) (*control.Stream, error) {
	p, err := r.findRalph(ctx)
	if err != nil {
		if errors.Is(err, control.ErrAmbiguous) {
			err = errors.New(r.notReached(err))
		}
		return nil, err
	}
	return control.WatchPeer(ctx, p)
}

// hasSession reports whether the project has a session to show.
func (r Records) hasSession() bool {
	_, err := memory.FindSession(r.Fs, r.Root, "")
	return err == nil
}

// waitForRun waits, in a project where nothing has run yet, until a ralph
// starts: its control socket answers (the stream is returned), or a
// session appears without one (ErrNotRunning: follow its files). It says
// on stderr that it waits; a nil stream and error mean ctx ended first.
func (r Records) waitForRun(ctx context.Context) (*control.Stream, error) {
	fmt.Fprintln(r.Err, "ralph watch: nothing has run in this project yet; waiting for a ralph to start here (Ctrl-C leaves)")
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(watchPoll):
		}
		st, err := r.watchRalph(ctx)
		if !errors.Is(err, control.ErrNotRunning) {
			return st, err
		}
		if r.hasSession() {
			// A ralph records its session a moment before its socket
			// listens: give it that moment before following the files.
			for range socketGrace {
				time.Sleep(watchPoll)
				if st, err = r.watchRalph(ctx); !errors.Is(err, control.ErrNotRunning) {
					break
				}
			}
			return st, err
		}
	}
}

// socketGrace is how many polls a watch waits for the socket of a ralph
// whose session has appeared.
const socketGrace = 20

// watchLive shows the session's events.jsonl up to where the watch
// joined the event stream, then every event from the socket.
func (r Records) watchLive(ctx context.Context, st *control.Stream, sink watchSink, end *runEnd) error {
	h := st.Hello
	sink.Begin(h.SessionID, true)
	path := memory.LogPath(r.Root, h.SessionID, memory.EventsLog)
	if _, err := replayEvents(r.Fs, path, 0, h.Offset, func(ev event.Event) { end.see(ev); sink.Event(ev) }); err != nil {
		return err
	}
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) || ctx.Err() != nil {
			break
		}
		if err != nil {
			return err
		}
		end.see(ev)
		sink.Event(ev)
	}
	sink.End()
	return nil
}

// watchFiles shows session id from its events.jsonl; with follow, it
// goes on while a ralph without a socket still works on it (end says how
// that run ended).
func (r Records) watchFiles(ctx context.Context, sink watchSink, id string, follow bool, end *runEnd) error {
	sink.Begin(id, false)
	path := memory.LogPath(r.Root, id, memory.EventsLog)
	var off int64
	var err error
	for first := true; ; first = false {
		running := follow && report.SessionRunning(r.Fs, r.Root, id)
		if first {
			end.followed = running
		}
		// Read after asking, so the last lines of a run that ended
		// meanwhile are shown too.
		if off, err = replayEvents(r.Fs, path, off, -1, func(ev event.Event) { end.see(ev); sink.Event(ev) }); err != nil {
			return err
		}
		if !running {
			break
		}
		select {
		case <-ctx.Done():
			sink.End()
			return nil
		case <-time.After(watchPoll):
		}
	}
	sink.End()
	return nil
}

// replayEvents is view.ReplayEvents, which the web view reads the same
// files with.
var replayEvents = view.ReplayEvents

// jsonWatch prints events as --output-format stream-json does: an init
// line for each session_started, the result object for the run's result,
// every other event as its stream-json line. Its first line is an init
// line whatever the session's first event: a task loop publishes no
// session_started, and a reader needs the session id first.
type jsonWatch struct {
	enc *streamEncoder
	r   Records
	// model is the watched session's, from its record, for an init line
	// no session_started gave the model of.
	model string
}

func (r Records) newJSONWatch() *jsonWatch {
	return &jsonWatch{enc: newStreamEncoder(r.Out), r: r}
}

func (j *jsonWatch) Begin(sessionID string, _ bool) {
	if st, err := memory.LoadSessionState(j.r.Fs, j.r.Root, sessionID); err == nil {
		j.model = st.Model
	}
}

func (j *jsonWatch) End() {}

func (j *jsonWatch) Event(ev event.Event) {
	if ev.Type != event.SessionStarted {
		j.enc.initOnce(ev.SessionID, cmp.Or(ev.Model, j.model), "", j.r.Root)
	}
	switch ev.Type {
	case event.SessionStarted:
		j.enc.init(ev.SessionID, ev.Model, "", j.r.Root)
	case event.RunResult:
		// A child agent's result is its parent's tool result; only the
		// run's own is a result line, as in stream-json output.
		if ev.Result != nil && mainAgent(ev.AgentID) {
			j.enc.value(NewResultJSON(*ev.Result))
		}
	default:
		j.enc.event(ev)
	}
}

// logsJSON prints a session's events (id, or the last session's) as
// ralph watch --json does, lines of the event contract, following a
// running one with follow.
func (r Records) logsJSON(ctx context.Context, id string, follow bool) error {
	id, err := memory.FindSession(r.Fs, r.Root, id)
	if err != nil {
		return err
	}
	return r.watchFiles(ctx, r.newJSONWatch(), id, follow, &runEnd{})
}

func mainAgent(id string) bool { return id == "" || id == event.MainAgent }
