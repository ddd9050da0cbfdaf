package repl

import (
	"errors"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/interrupts"
)

// remote is the chat shell as another terminal steers it (ralph stop,
// say, pause, continue): each request does what the same keys or line
// would do here, and the person at this terminal is told it happened.
type remote struct{ s *Shell }

var (
	_ control.Target = remote{}
	_ control.Idler  = remote{}
)

// Working implements control.Idler: a chat waiting at its prompt has
// nothing to stop or to take a message, and a client looking for the
// ralph working in the project passes it over for one that has.
func (r remote) Working() bool {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.s.front() != nil
}

// told shows a request from another terminal above the prompt.
func (r remote) told(what string) {
	r.s.scr.line(r.s.scr.pal.Dim("↯ from another terminal: " + what))
}

// Stop implements control.Target: the hard stop of Ctrl-C or /stop, said
// to come from where it came from.
func (r remote) Stop(from string) control.Reply {
	if !r.s.hardStopBy(control.StopText(from)) {
		return control.NotDone("nothing is running in the chat; it waits at its prompt")
	}
	if from == control.FromWeb {
		r.told("a stop from ralph serve's page")
	} else {
		r.told("ralph stop")
	}
	return control.Done("stopping: the work in flight is cancelled and the state saved; the chat stays open")
}

// Say implements control.Target: a message for the work running, as if
// typed while it runs. At an idle prompt it starts nothing: the person
// at the terminal decides what the chat does next.
func (r remote) Say(text string, urgent bool) control.Reply {
	text = strings.TrimSpace(text)
	if text == "" {
		return control.Reply{Bad: true, Text: "the message is empty"}
	}
	s := r.s
	s.mu.Lock()
	j := s.front()
	s.mu.Unlock()
	if j == nil {
		return control.NotDone("nothing is running in the chat to take the message; type it at its prompt")
	}
	if urgent {
		j.queue.Push(interrupts.Interrupt{Kind: interrupts.Urgent, Text: text})
		r.told("an urgent message, cutting the current step")
		return control.Done("urgent: cutting the current step; the model reads your message next")
	}
	j.queue.Push(interrupts.Interrupt{Kind: interrupts.Normal, Text: text})
	r.told("a message, delivered at the next step boundary")
	return control.Done("queued: delivered at the next step boundary")
}

// Pause implements control.Target: /pause.
func (r remote) Pause() control.Reply {
	c := r.s.opts.Control
	if c == nil {
		return control.NotDone("no task loop is running in the chat")
	}
	if c.Paused() {
		return control.Done("the task loop is paused already; ralph continue lets it go on")
	}
	if err := c.Pause(); err != nil {
		return loopReply(err)
	}
	r.told("ralph pause")
	return control.Done("paused: no new task starts; the tasks in flight finish first")
}

// Continue implements control.Target: /run of a paused loop, from another terminal (ralph continue).
func (r remote) Continue() control.Reply {
	c := r.s.opts.Control
	if c == nil {
		return control.NotDone("no task loop is running in the chat")
	}
	if !c.Paused() {
		return control.Done("the task loop is not paused; it goes on")
	}
	if err := r.s.resume(); err != nil {
		return loopReply(err)
	}
	r.told("ralph continue")
	return control.Done("continuing: the task loop goes on with the next task")
}

func loopReply(err error) control.Reply {
	if errors.Is(err, loop.ErrNoLoop) {
		return control.NotDone("no task loop is running in the chat")
	}
	return control.NotDone("%s", err.Error())
}
