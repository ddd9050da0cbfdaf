package repl

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/scripts/commands"
)

// Handle renders one coordinator event. Subscribe it to the coordinator's
// events: the broker calls it in order, one event at a time, on its own
// goroutine. It is cheap: a line or a piece of text at most. The screen
// and the agents it updates keep their own locks, because the input loop
// and the status line use them too.
func (s *Shell) Handle(ev coordinator.Event) {
	s.agents.Handle(ev)
	child := ev.AgentID != "" && ev.AgentID != coordinator.MainAgent
	who := ""
	if child {
		who = "[" + ev.AgentID + "] "
	}
	w, _ := s.scr.dims()
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
		if !child {
			s.scr.finish(ev.Text)
		}
	case coordinator.EventToolCall:
		s.scr.line(s.scr.dim(clipWidth(who+"• "+commands.ToolSummary(ev.ToolName, ev.ToolArgs), w-1)))
	case coordinator.EventToolResult:
		first := firstLine(ev.Output)
		if ev.IsError {
			s.scr.line(s.scr.red(clipWidth(who+"  ✗ "+first, w-1)))
		} else {
			s.scr.line(s.scr.dim(clipWidth(who+"  ↳ "+first, w-1)))
		}
	case coordinator.EventRetry:
		s.scr.void()
		if ev.Retry != nil {
			s.scr.line(s.scr.dim(clipWidth(fmt.Sprintf("%s↻ %s; retrying in %s", who, ev.Retry.Reason, ev.Retry.Wait.Round(1e7)), w-1)))
		}
	case coordinator.EventUserMessage:
		s.scr.line(s.scr.dim(clipWidth("↳ delivered: "+strings.Join(strings.Fields(ev.Text), " "), w-1)))
	case coordinator.EventAgentSpawned:
		s.scr.line(s.scr.dim(clipWidth("↗ "+ev.AgentID+" started: "+strings.Join(strings.Fields(ev.Text), " "), w-1)))
	case coordinator.EventAgentFinished:
		verb := "finished"
		if ev.IsError {
			verb = "failed: " + firstLine(ev.Text)
		}
		s.scr.line(s.scr.dim(clipWidth("↘ "+ev.AgentID+" "+verb, w-1)))
	case coordinator.EventTaskChanged:
		s.scr.line(s.scr.dim(clipWidth("▸ task "+ev.Text+": "+ev.Output, w-1)))
	case coordinator.EventError:
		s.scr.line(s.scr.red(clipWidth(who+"✗ "+ev.Text, w-1)))
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
