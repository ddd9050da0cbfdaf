package eventwords

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/text"
)

// Activity is what an event shows its agent doing now, for a status line,
// the agent panel and /agents: "thinking (turn 3)", "running `make`",
// "waiting for the model — no data for 12s". It reports false when the
// event says nothing about that. Like EventLine, it is the one wording of
// its kind, so every face says the same of an agent at work.
func Activity(ev event.Event) (string, bool) {
	s, ok := activity(ev)
	return text.StripControls(s), ok
}

func activity(ev event.Event) (string, bool) {
	switch ev.Type {
	case event.SessionStarted:
		return "starting", true
	case event.TurnStarted, event.ThinkingDelta:
		return fmt.Sprintf("thinking (turn %d)", ev.Turn), true
	case event.TextDelta:
		return fmt.Sprintf("writing (turn %d)", ev.Turn), true
	case event.ToolCall:
		// A call a person is asked about reads so until the question
		// comes (event.Question), which says it waits.
		return ToolCall(ev.ToolName, ev.ToolArgs), true
	case event.Question:
		// The status line said "running `echo hi`" while the command
		// waited for its approval (issue 68).
		if q := ev.Question; q != nil && q.Kind == "approval" {
			return "waiting for approval", true
		}
		return "waiting for your answer", true
	case event.Answered:
		if q := ev.Question; q != nil && q.Kind == "approval" && !strings.HasPrefix(ev.Text, "no") {
			return "running what was approved", true
		}
		return "going on after the answer", true
	case event.ToolResult:
		return "reading the result of " + ev.ToolName, true
	case event.Retry:
		return "retrying the model call", true
	case event.Fallback:
		if f := ev.Fallback; f != nil {
			return "asking the fallback model " + OneLine(f.To, shortWidth), true
		}
	case event.Waiting:
		if w := Waiting(ev); w != "" {
			return w, true
		}
	case event.AgentSpawned:
		return "starting: " + OneLine(ev.Text, 80), true
	case event.TaskChanged:
		if id, state, _ := strings.Cut(ev.Text, " "); state == "in_progress" {
			return "working on " + id, true
		}
	case event.LimitWait, event.Breaker:
		return OneLine(ev.Text, longWidth), true
	}
	return "", false
}
