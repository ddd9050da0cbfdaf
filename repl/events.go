package repl

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/scripts/view"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory/text"
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
	who := ""
	if child {
		who = "[" + ev.AgentID + "] "
	}
	if ev.Type == coordinator.EventWaiting {
		if !child {
			s.setWaiting(ev.Text)
		}
		return
	}
	if ev.Type == coordinator.EventThinkingDelta {
		if !child {
			s.setWaiting(text.StripControls(s.think.add(ev.Text)))
		}
		return
	}
	if !child {
		s.setWaiting("")
	}
	w, _ := s.scr.dims()
	// fit makes one line of untrusted text safe and short enough.
	fit := func(t string) string { return clipWidth(text.StripControls(t), w-1) }
	if !child {
		if sum := s.think.fold(); sum != "" {
			s.scr.line(s.scr.pal.Dim(fit(sum)))
		}
	}
	switch ev.Type {
	case coordinator.EventTurnStarted:
		if !child {
			// A cut answer (an urgent message) left its draft as it was.
			s.scr.end()
		}
	case coordinator.EventTextDelta:
		s.tokens.Add(int64(max(1, len(ev.Text)/4)))
		if !child {
			s.scr.delta(ev.Text)
		}
	case coordinator.EventAssistant:
		switch {
		case !child:
			s.scr.finish(ev.Text)
		case strings.TrimSpace(ev.Text) != "":
			// A child's or an external agent's message, folded to its
			// first line as claude and codex show their own.
			s.scr.line(s.scr.pal.Dim(fit(who + "│ " + firstLine(ev.Text))))
		}
	case coordinator.EventToolCall:
		if ev.Asking {
			// The question shows the call; the asker shows it running
			// once it is allowed (approve.go).
			break
		}
		s.scr.line(s.scr.pal.Dim(fit(who + "• " + view.ToolCall(ev.ToolName, ev.ToolArgs))))
	case coordinator.EventToolResult:
		first := firstLine(ev.Output)
		if ev.IsError && s.childFailures.Told(ev.ToolID) {
			// The child's agent_finished line said it.
			break
		}
		if ev.IsError {
			s.scr.line(s.scr.pal.Red(fit(who + "  ✗ " + first)))
		} else {
			s.scr.line(s.scr.pal.Dim(fit(who + "  ↳ " + first)))
		}
	case coordinator.EventRetry:
		s.scr.void()
		if ev.Retry != nil {
			s.scr.line(s.scr.pal.Dim(fit(fmt.Sprintf("%s↻ %s; retrying in %s", who, ev.Retry.Reason, ev.Retry.Wait.Round(1e7)))))
		}
	case coordinator.EventUserMessage:
		s.scr.line(s.scr.pal.Dim(fit("↳ delivered: " + strings.Join(strings.Fields(ev.Text), " "))))
	case coordinator.EventAgentSpawned:
		s.scr.line(s.scr.pal.Dim(fit("↗ " + ev.AgentID + " started: " + strings.Join(strings.Fields(ev.Text), " "))))
	case coordinator.EventAgentFinished:
		verb := "finished"
		if ev.IsError {
			verb = "failed: " + firstLine(ev.Text)
			s.childFailures.Failed(ev.ToolID)
		}
		s.scr.line(s.scr.pal.Dim(fit("↘ " + ev.AgentID + " " + verb)))
	case coordinator.EventTaskChanged:
		s.scr.line(s.scr.pal.Dim(fit("▸ task " + ev.Text + ": " + ev.Output)))
	case coordinator.EventLimitWait, coordinator.EventBreaker:
		// The /run loop waits for a limit or its breaker changed: say why
		// nothing seems to happen.
		s.scr.line(s.scr.pal.Dim(fit("⏸ " + ev.Text)))
	case coordinator.EventWarning:
		s.scr.line(s.scr.pal.Red(fit(who + "! " + ev.Text)))
	case coordinator.EventError:
		// An error ends its agent's run: the run's result says the main
		// agent's once (finishJob), and a child's agent_finished line
		// says a child's.
	case coordinator.EventInterrupted:
		if !child {
			s.scr.end()
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	first, rest, _ := strings.Cut(s, "\n")
	if first == "" {
		return "(no output)"
	}
	if rest != "" {
		return first + " …"
	}
	return first
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
