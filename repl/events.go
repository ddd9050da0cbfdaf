package repl

import (
	"strings"

	"github.com/ralph-dev/ralph/scripts/view"

	"github.com/ralph-dev/ralph/coordinator"
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
func (s *Shell) Handle(ev coordinator.Event) {
	s.agents.Handle(ev)
	child := ev.AgentID != "" && ev.AgentID != coordinator.MainAgent
	switch ev.Type {
	case coordinator.EventWaiting:
		if !child {
			s.setWaiting(view.Waiting(ev))
		}
		return
	case coordinator.EventThinkingDelta:
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
	// The chat shows a line for these kinds (a child's message, a call
	// nobody is asked about, an error result its agent_finished line did
	// not tell) and acts on some of them; the line's words are the view's.
	show := false
	switch ev.Type {
	case coordinator.EventTurnStarted, coordinator.EventInterrupted:
		if !child && ev.Type == coordinator.EventInterrupted {
			// A hard stop: the answer so far is rendered (stopShown).
			s.stopShown()
		}
		if !child {
			// A cut answer (an urgent message) left its draft as it was.
			s.scr.end()
		}
	case coordinator.EventStateSaved:
		if !child {
			s.savedShown()
		}
	case coordinator.EventTextDelta:
		s.tokens.Add(int64(max(1, len(ev.Text)/4)))
		if !child {
			s.scr.delta(ev.Text)
		}
	case coordinator.EventAssistant:
		if !child {
			s.scr.finish(ev.Text)
		}
		// A child's or an external agent's message, folded to its first
		// line as claude and codex show their own.
		show = child && strings.TrimSpace(ev.Text) != ""
	case coordinator.EventToolCall:
		// An asked call: the question shows it, and the asker shows it
		// running once it is allowed (approve.go).
		show = !ev.Asking
	case coordinator.EventToolResult:
		// A failed child's error: its agent_finished line said it.
		show = !ev.IsError || !s.childFailures.Told(ev.ToolID)
	case coordinator.EventRetry:
		s.scr.void()
		show = true
	case coordinator.EventAgentFinished:
		if ev.IsError {
			s.childFailures.Failed(ev.ToolID)
		}
		show = true
	case coordinator.EventUserMessage:
		// A message delivered while the run works; a prompt is on the
		// screen already, where the person typed it.
		show = ev.Priority != ""
	case coordinator.EventAgentSpawned, coordinator.EventTaskChanged, coordinator.EventVerified,
		coordinator.EventLimitWait, coordinator.EventBreaker, coordinator.EventWarning:
		// The /run loop waits for a limit or its breaker changed: the
		// line says why nothing seems to happen.
		show = true
	case coordinator.EventConversationCompacted:
		// ralph compacted the conversation to try a refused request once
		// more; /compact's own says what it did when its job ends.
		show = view.CompactedForRetry(ev)
	case coordinator.EventError:
		// An error ends its agent's run: the run's result says the main
		// agent's once (finishJob), and a child's agent_finished line
		// says a child's.
	}
	if l, ok := view.EventLine(ev); ok && show {
		s.printLine(l)
	}
}

// printLine prints an event's line above the prompt, cut to the screen.
func (s *Shell) printLine(l view.Line) {
	w, _ := s.scr.dims()
	s.scr.line(l.Paint(s.scr.pal, w-1))
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
