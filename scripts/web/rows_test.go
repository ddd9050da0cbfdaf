package web

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// A session page shows each prompt once, as a prompt row, whether the
// record has it as a user_message (since issue 57) or only as
// session_started's text (before), also when that session_started is the
// record's last event.
func TestRowsShowEachPromptOnce(t *testing.T) {
	started := func(p string) event.Event {
		return event.Event{Type: event.SessionStarted, Model: "m", Text: p, AgentID: event.MainAgent}
	}
	said := func(p string) event.Event {
		return event.Event{Type: event.UserMessage, Text: p, AgentID: event.MainAgent}
	}
	evs := []event.Event{
		started("old one"), {Type: event.Assistant, Text: "four"},
		started("new one"), said("new one"), {Type: event.Assistant, Text: "six"},
		started("old last"),
	}
	var rw rower
	var got []string
	for i, ev := range evs {
		for _, r := range rw.rows(i+1, ev) {
			got = append(got, r.Class+" "+r.Text)
		}
	}
	for _, r := range rw.end(len(evs)) {
		got = append(got, r.Class+" "+r.Text)
	}
	want := strings.Join([]string{
		"note ● run started · model m", "prompt › old one", "answer ",
		"note ● run started · model m", "prompt › new one", "answer ",
		"note ● run started · model m", "prompt › old last",
	}, "\n")
	if strings.Join(got, "\n") != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestRowShowsTheTodoList: the web page shows a todo_updated event as the
// line ralph watch and ralph logs print, its steps' words stripped of
// terminal controls.
func TestRowShowsTheTodoList(t *testing.T) {
	t.Parallel()
	r, ok := eventRow(7, event.Event{Type: event.TodoUpdated, AgentID: event.MainAgent, Todo: &memory.TodoList{Items: []memory.TodoItem{
		{Step: "read", Status: memory.TodoCompleted}, {Step: "fix\x1b]0;x\x07", Status: memory.TodoInProgress}}}})
	if !ok || r.Class != "note" || r.Text != "☰ todo 1/2: ☑ read · ◐ fix" {
		t.Fatalf("row %+v (%v)", r, ok)
	}
}
