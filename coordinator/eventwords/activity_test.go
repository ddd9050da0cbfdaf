package eventwords

import (
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// While a command waits for its approval the status says so, not that
// the command runs (issue 68); once answered, it says what goes on.
func TestActivityWhileAQuestionWaits(t *testing.T) {
	approval := &memory.Question{Kind: "approval", Text: "run `echo hi`?"}
	for _, tc := range []struct {
		ev   event.Event
		want string
	}{
		{event.Event{Type: event.ToolCall, ToolName: "run_command", ToolArgs: []byte(`{"command":"echo hi"}`)}, "running `echo hi`"},
		{event.Event{Type: event.Question, Question: approval}, "waiting for approval"},
		{event.Event{Type: event.Question, Question: &memory.Question{Kind: "ask_user"}}, "waiting for your answer"},
		{event.Event{Type: event.Answered, Question: approval, Text: "yes"}, "running what was approved"},
		{event.Event{Type: event.Answered, Question: approval, Text: "no: not now"}, "going on after the answer"},
	} {
		if got, ok := Activity(tc.ev); !ok || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.ev.Type, got, ok, tc.want)
		}
	}
}
