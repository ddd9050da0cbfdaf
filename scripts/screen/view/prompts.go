package view

import (
	"github.com/ralph-dev/ralph/coordinator/event"
)

// Prompts reads the records of a ralph before issue 57 as a newer one's:
// there a run's prompt was only session_started's text, and no
// user_message followed it. A face that shows a session's records hands
// each event to Next, which returns the prompt to show before it (a
// user_message made of the last session_started's text) when that
// session_started had none of its own, and Flush at the end of the
// records. Records with the user_message come through unchanged, each
// prompt once.
type Prompts struct {
	pending *event.Event
}

// Next returns the prompt to show before ev, if any.
func (p *Prompts) Next(ev event.Event) (event.Event, bool) {
	prompt, ok := event.Event{}, false
	if p.pending != nil {
		if !isPrompt(ev) {
			prompt, ok = *p.pending, true
		}
		p.pending = nil
	}
	if ev.Type == event.SessionStarted && ev.Text != "" && mainAgent(ev) {
		p.pending = &event.Event{Type: event.UserMessage, Text: ev.Text, Time: ev.Time,
			SessionID: ev.SessionID, AgentID: ev.AgentID}
	}
	return prompt, ok
}

// Flush returns the prompt of a session_started that ended the records.
func (p *Prompts) Flush() (event.Event, bool) {
	if p.pending == nil {
		return event.Event{}, false
	}
	prompt := *p.pending
	p.pending = nil
	return prompt, true
}

// isPrompt reports whether ev is a run's prompt as ralph records it since
// issue 57: the main agent's user_message without a priority.
func isPrompt(ev event.Event) bool {
	return ev.Type == event.UserMessage && ev.Priority == "" && mainAgent(ev)
}

func mainAgent(ev event.Event) bool {
	return ev.AgentID == "" || ev.AgentID == event.MainAgent
}
