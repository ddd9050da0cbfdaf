package repl

import (
	"github.com/ralph-dev/ralph/scripts/screen/view"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
)

// Handle renders one coordinator event. Subscribe it to the coordinator's
// events: the broker calls it in order, one event at a time, on its own
// goroutine. It is cheap: a line or a piece of text at most. The screen
// and the agents it updates keep their own locks, because the input loop
// and the status line use them too.
//
// Every line it prints is made of text from the model or from commands
// (output, task titles, agent names, error messages), so each is stripped
// of terminal controls before ralph adds its own styling.
func (s *Shell) Handle(ev event.Event) {
	s.agents.Handle(ev)
	child := ev.AgentID != "" && ev.AgentID != event.MainAgent
	switch ev.Type {
	case event.Waiting:
		if !child {
			s.setWaiting(eventwords.Waiting(ev))
		}
		return
	case event.ThinkingDelta:
		if !child {
			s.setWaiting(s.think.Add(ev.Text))
		}
		return
	}
	if !child {
		s.setWaiting("")
		if l, ok := s.think.Fold(); ok {
			s.printLine(l)
		}
	}
	// The chat acts on some kinds; which lines it prints is the feed's
	// rule, shared with the one-shot, and their words are the
	// vocabulary's.
	switch ev.Type {
	case event.TurnStarted, event.Interrupted:
		if !child && ev.Type == event.Interrupted {
			// A hard stop: the answer so far is rendered (stopShown).
			s.stopShown()
		}
		if !child {
			// A cut answer (an urgent message) left its draft as it was.
			s.scr.end()
		}
	case event.StateSaved:
		if !child {
			s.savedShown()
		}
	case event.TextDelta:
		s.tokens.Add(int64(max(1, len(ev.Text)/4)))
		if !child {
			s.scr.delta(ev.Text)
		}
	case event.Assistant:
		if !child {
			s.scr.finish(ev.Text)
		}
	case event.Retry:
		s.scr.void()
	case event.RunResult:
		if !child {
			s.scr.commitTodo()
		}
	}
	l, ok := s.feed.Line(ev)
	if ev.Type == event.TodoUpdated && !child && ev.Todo != nil {
		// The main agent's list is the block that changes in place; a
		// child's is its line.
		s.scr.setTodo(*ev.Todo)
		return
	}
	if ok {
		s.printLine(l)
	}
}

// printLine prints an event's line above the prompt, cut to the screen.
func (s *Shell) printLine(l eventwords.Line) {
	w, _ := s.scr.dims()
	s.scr.line(view.Paint(l, s.scr.pal, w-1))
}

// setWaiting sets what the status line says about a silent model, ""
// when data flows.
func (s *Shell) setWaiting(t string) {
	s.waitMu.Lock()
	s.waiting = t
	s.waitMu.Unlock()
}

func (s *Shell) waitingText() string {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	return s.waiting
}
