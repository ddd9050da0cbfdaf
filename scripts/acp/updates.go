package acp

import (
	"context"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// updates carries a session's events to the client as session/update
// notifications, in order, on a goroutine of its own: the coordinator's
// handler only queues (add), so a slow client never holds a turn up.
type updates struct {
	srv *Server
	ss  *session
	tr  *translator

	mu   sync.Mutex
	cond *sync.Cond
	q    []event.Event
	// busy says an event is being sent; done that the queue is closed.
	busy bool
	done bool
	// asking is the id of the latest tool call a person is asked about
	// (event.Event.Asking), for the permission request to name.
	asking string
	// befores are write_file's files as they were when the call was
	// announced, read before the tool runs (fileBefore), by call id.
	befores map[string]*string
}

func newUpdates(s *Server, ss *session) *updates {
	u := &updates{srv: s, ss: ss, befores: map[string]*string{}}
	u.cond = sync.NewCond(&u.mu)
	u.tr = newTranslator(ss)
	return u
}

// add queues an event (the face's Handle, called in the publishing
// goroutine: it costs an append).
func (u *updates) add(ev event.Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done {
		return
	}
	if ev.Type == event.ToolCall {
		if ev.Asking {
			u.asking = ev.ToolID
		}
		if ev.ToolName == "write_file" {
			// Read now: the tool writes the file as soon as this returns.
			u.befores[ev.ToolID] = u.ss.fileBefore(argPath(ev.ToolArgs))
		}
	}
	u.q = append(u.q, ev)
	u.cond.Broadcast()
}

// takeBefore is a write's file before it, taken once.
func (u *updates) takeBefore(id string) *string {
	u.mu.Lock()
	defer u.mu.Unlock()
	b := u.befores[id]
	delete(u.befores, id)
	return b
}

// askingCall is the tool call a question is about, "" for none.
func (u *updates) askingCall() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.asking
}

// run sends the queued events until stop.
func (u *updates) run() {
	for {
		u.mu.Lock()
		for len(u.q) == 0 && !u.done {
			u.cond.Wait()
		}
		if len(u.q) == 0 && u.done {
			u.mu.Unlock()
			return
		}
		ev := u.q[0]
		u.q = u.q[1:]
		u.busy = true
		u.mu.Unlock()
		for _, up := range u.tr.event(ev) {
			u.send(up)
		}
		u.mu.Lock()
		u.busy = false
		u.cond.Broadcast()
		u.mu.Unlock()
	}
}

// send sends one update now; a client gone is no error here (the
// connection's end closes the session).
func (u *updates) send(up sdk.SessionUpdate) {
	_ = u.srv.conn.SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(u.ss.id), Update: up})
}

// flush waits until every queued event has been sent.
func (u *updates) flush() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for (len(u.q) > 0 || u.busy) && !u.done {
		u.cond.Wait()
	}
}

// stop ends run once the queue is sent.
func (u *updates) stop() {
	u.flush()
	u.mu.Lock()
	u.done = true
	u.cond.Broadcast()
	u.mu.Unlock()
}
