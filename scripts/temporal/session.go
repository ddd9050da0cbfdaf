package temporal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// runSession records a run on Temporal as a session of the project
// where ralph run was started, as a local run records itself: its events
// in events.jsonl, its figures in session.json, the project in the
// registry. It serves the events on the project's control socket, so
// ralph sessions, logs and report list the run, and ralph serve's page of
// it follows it live, as they do a local run. The session is the
// workflow's (its id is the run's session id), made at its first event.
type runSession struct {
	fs     afero.Fs
	root   string
	marker remote.Marker
	run    memory.RunConfig
	events *pubsub.Broker[event.Event]
	ctl    *control.Server

	mu   sync.Mutex
	sess *memory.Session
	rec  *coordinator.Recording
	id   string
	off  bool // the session could not be recorded: events go to the socket only
}

// startSession serves the control socket of the project at root
// for the run; a ralph that serves it already (a chat at its prompt)
// keeps it, and the run is recorded all the same.
func startSession(fs afero.Fs, root string, m remote.Marker, rc memory.RunConfig) *runSession {
	t := &runSession{fs: fs, root: root, marker: m, run: rc, events: pubsub.NewBroker[event.Event]()}
	ctl, err := control.Start(control.Options{Root: root, Session: t.session, Mode: "run", Target: target{t}, Events: t.events})
	if err == nil {
		t.ctl = ctl
	}
	return t
}

// session is the run's session id and the path of its events.jsonl, as a
// watch joining the control socket reads them.
func (t *runSession) session() (id, eventsPath string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id == "" {
		return "", ""
	}
	return t.id, memory.LogPath(t.root, t.id, memory.EventsLog)
}

// publish records ev and hands it to the socket's watchers. The first
// event names the session; a session already recorded here (a second
// ralph run attaching to the same run) is not recorded twice.
func (t *runSession) publish(ev event.Event) {
	t.mu.Lock()
	if t.sess == nil && !t.off && ev.SessionID != "" {
		now := time.Now().UTC()
		rc := t.run
		st := memory.State{SessionID: ev.SessionID, Status: memory.StatusRunning, Mode: "run", Run: &rc, StartedAt: now, UpdatedAt: now}
		if there, err := afero.Exists(t.fs, memory.SessionDir(t.root, ev.SessionID)); err != nil || there {
			t.off = true
		} else if s, err := memory.CreateSession(t.fs, t.root, ev.SessionID, st); err != nil {
			t.off = true
		} else {
			t.sess, t.id = s, ev.SessionID
			t.rec = coordinator.StartRecording(context.Background(), t.events, s, eventwords.Transcript)
			// The registry is a convenience index; failing to update it
			// must not fail the run.
			_ = memory.OpenRegistry(rootfs.Person(), memory.RegistryDir(os.Getenv)).Update(memory.RegistryEntry{Root: t.root, SessionID: t.id, Mode: "run", UpdatedAt: now})
		}
	}
	t.mu.Unlock()
	t.events.Publish(ev)
}

// finish writes how the run ended into its session and stops serving the
// socket; watchers get every event published before.
func (t *runSession) finish(res *remote.Result) {
	if t.ctl != nil {
		_ = t.ctl.Close()
	}
	// Nothing is published after the run's last line.
	defer t.events.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil {
		return
	}
	_ = t.rec.Stop()
	_ = t.sess.SaveState(func(st *memory.State) {
		now := time.Now().UTC()
		st.UpdatedAt, st.EndedAt = now, now
		switch {
		case res == nil:
			st.Status, st.Error = memory.StatusFailed, "the run on Temporal gave no result"
		case res.Reason == loop.ReasonInterrupted:
			st.Status = memory.StatusInterrupted
		case res.IsError:
			st.Status, st.Error = memory.StatusFailed, res.Error
		default:
			st.Status = memory.StatusCompleted
		}
		if res != nil {
			cost := res.CostUSD
			st.Iteration, st.Usage, st.CostUSD, st.Tasks = res.Iterations, res.Usage, &cost, res.Counts
		}
	})
	_ = t.sess.Close()
}

// target steers the run through the socket (ralph serve's
// buttons) as ralph stop, say, pause and continue steer it: a signal to
// its workflow.
type target struct{ t *runSession }

func (g target) send(req control.Request) control.Reply {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done, err := Steer(ctx, g.t.root, g.t.marker, req, &out)
	switch {
	case errors.Is(err, ErrNotSteerable) || errors.Is(err, ErrNoBinary):
		return control.NotDone("%s", "ralph: "+err.Error())
	case err != nil:
		return control.NotDone("%s", strings.TrimSpace(out.String()))
	}
	return control.Done("%s", done)
}

func (g target) Stop(from string) control.Reply {
	return g.send(control.Request{Op: remote.OpStop, From: from})
}
func (g target) Say(text string, urgent bool) control.Reply {
	return g.send(control.Request{Op: remote.OpSay, Text: text, Urgent: urgent})
}
func (g target) Pause() control.Reply { return g.send(control.Request{Op: remote.OpPause}) }
func (g target) Continue() control.Reply {
	return g.send(control.Request{Op: remote.OpContinue})
}
