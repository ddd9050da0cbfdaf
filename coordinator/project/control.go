package project

import (
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/approval"
)

// Serve opens the project's control socket for the face running now, so
// another terminal can steer it (see coordinator/control): t is what its
// requests act on. Call it after Coordinator, whose event stream a watch
// follows. It returns the session's questions, which the face makes the
// approval policy's asker (see Asker); nil when there is no socket. A
// socket that cannot be opened is a notice, not a failure: the work goes
// on, and questions are asked only where there is a terminal.
func (p *Project) Serve(t control.Target, notify func(string)) *control.Questions {
	if p.control != nil {
		p.control.SetTarget(t)
		p.questions.SetNotify(notify)
		return p.questions
	}
	if p.coord == nil {
		return nil
	}
	if !rootfs.IsReal(p.Fs) {
		// A socket needs a real directory; tests on a memory filesystem
		// have none.
		return nil
	}
	var listener *control.Listener
	if p.bound != nil {
		b := <-p.bound
		p.bound = nil
		if b.err != nil {
			if notify != nil {
				notify("no control socket, so no other terminal can steer this run: " + b.err.Error())
			}
			return nil
		}
		listener = b.l
	}
	events := p.coord.Events()
	q := control.NewQuestions(p.Session, func(ev event.Event) {
		ev.SessionID = p.Session.CurrentID()
		events.Publish(ev)
	}, notify)
	srv, err := control.Start(control.Options{
		Root: p.Root, Mode: p.Mode, Target: t, Questions: q, Events: events, Redact: p.Redactor.RedactBytes,
		Session: func() (string, string) {
			id := p.Session.CurrentID()
			return id, memory.LogPath(p.Root, id, memory.EventsLog)
		},
		Listener: listener,
	})
	if err != nil {
		if notify != nil {
			notify("no control socket, so no other terminal can steer this run: " + err.Error())
		}
		return nil
	}
	p.control, p.questions = srv, q
	return q
}

// Asker is who the approval policy asks while a face runs: the person at
// its terminal (term; nil when there is none) and, through the control
// socket, anyone who answers with ralph answer, as the one rule of
// waiting says. When nobody may be asked it returns nil and tells the
// policy why, which every refusal then says.
func (p *Project) Asker(q *control.Questions, term approval.Asker) approval.Asker {
	w := p.waiting(term != nil)
	p.Approval.SetHookNobody(p.hookNobody(term != nil))
	if !w.wait {
		p.Approval.SetNobody(w.nobody, w.how)
		return nil
	}
	switch {
	case q != nil:
		q.SetLimit(w.limit)
		return q.Asker(term)
	case term != nil:
		return term
	}
	p.Approval.SetNobody("no other terminal can answer either (there is no control socket)", "")
	return nil
}

// boundSocket is the outcome of binding the control socket ahead.
type boundSocket struct {
	l   *control.Listener
	err error
}

// bindAhead binds the control socket on a goroutine of its own; Serve
// takes it, or closeControl gives it up. Call it under the lock.
func (p *Project) bindAhead() {
	p.bound = make(chan boundSocket, 1)
	go func() {
		l, err := control.Bind(p.Root)
		p.bound <- boundSocket{l, err}
	}()
}

// closeControl stops serving the socket; watchers get the events so far.
func (p *Project) closeControl() error {
	if p.bound != nil {
		// Bound ahead and never served (the run ended before it began).
		if b := <-p.bound; b.l != nil {
			_ = b.l.Close()
		}
		p.bound = nil
	}
	if p.control == nil {
		return nil
	}
	err := p.control.Close()
	p.control = nil
	return err
}
