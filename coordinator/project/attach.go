package project

import (
	"context"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/workers/approval"
)

// Face is a face of ralph (one-shot, ralph run, a script, the chat shell)
// as the project sees it when the face attaches: every face brings up
// the same things in the same order through Attach, so that none of them
// forgets a step (the control socket, the approval asker) the others
// take.
type Face struct {
	// Handle receives the coordinator's events.
	Handle func(event.Event)
	// InStep calls Handle in the goroutine that publishes, so every
	// event has reached the face before the turn that sent it returns: a
	// face that redraws its prompt when a turn ends then never draws it
	// above the answer's last lines. Only for a Handle that costs no more
	// than an append (the chat shell's, whose painter does the writing),
	// since it holds the coordinator up; otherwise Handle gets its events
	// from a queue of its own.
	InStep bool
	// Steer is what another terminal's ralph stop, say, pause and
	// continue reach, given the face's coordinator; nil: only a stop,
	// on the face's queue.
	Steer func(*coordinator.Coordinator) control.Target
	// Notify tells the person something beside the events.
	Notify func(string)
	// Asker asks the person at this face's terminal; nil without one.
	Asker approval.Asker
	// Queue carries the conversation's interrupts; nil makes one.
	Queue *interrupts.Queue
	// Signals turns SIGINT and SIGTERM into hard stops on the queue
	// (faces without a line editor of their own).
	Signals bool
	// Coord is a coordinator already working (a task loop's, handed to
	// the chat shell); nil makes one.
	Coord *coordinator.Coordinator
}

// Attached is a face's hold on the project.
type Attached struct {
	Coord *coordinator.Coordinator
	Queue *interrupts.Queue
	// Questions are the questions another terminal may answer (nil
	// without a control socket).
	Questions   *control.Questions
	stopSignals func()
	asker       bool
	p           *Project
	// notify is where the project's notices went before Attach.
	notify func(string)
}

// Attach brings a face up on the project: its queue (and the signals
// that feed it), its coordinator, the control socket another terminal
// steers it through, and the approval asker, which asks at the face's
// terminal and through ralph answer. Detach takes down what Attach set.
func (p *Project) Attach(ctx context.Context, f Face) *Attached {
	a := &Attached{Queue: f.Queue, Coord: f.Coord, p: p, stopSignals: func() {}}
	if a.Queue == nil {
		a.Queue = interrupts.NewQueue()
	}
	if f.Signals {
		a.stopSignals = interrupts.NotifySignals(ctx, a.Queue)
	}
	if a.Coord == nil {
		a.Coord = p.Coordinator(a.Queue, nil)
	}
	p.SetSink(f.Handle, f.InStep)
	var steer control.Target = control.Steer{Queue: a.Queue}
	if f.Steer != nil {
		steer = f.Steer(a.Coord)
	}
	notify := f.Notify
	if notify == nil {
		notify = func(string) {}
	} else if p.notices != nil {
		// The project's notices from now on are the face's, printed
		// where it prints its own.
		a.notify = p.notices.route(func(s string) { f.Notify(s) })
	}
	a.Questions = p.Serve(steer, notify)
	if msg := p.waitNotice(); msg != "" {
		notify(msg)
	}
	if asker := p.Asker(a.Questions, f.Asker); asker != nil {
		p.Approval.SetAsker(asker)
		a.asker = true
	}
	return a
}

// StopSignals stops turning signals into hard stops, before Detach: a
// task loop handing over to the chat shell gives the terminal's keys back.
func (a *Attached) StopSignals() { a.stopSignals() }

// Detach takes down what Attach set up for the face.
func (a *Attached) Detach() {
	a.stopSignals()
	if a.notify != nil {
		a.p.notices.route(a.notify)
	}
	if a.asker {
		a.p.Approval.SetAsker(nil)
	}
}
