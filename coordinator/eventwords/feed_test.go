package eventwords

import (
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestFeedRule is the one rule for which events a live face prints, kind
// by kind: the chat (AllResults) and the one-shot's progress and -v lines
// differ only in the results of calls that succeeded.
func TestFeedRule(t *testing.T) {
	child := "agent-1.1"
	for _, c := range []struct {
		name     string
		ev       event.Event
		chat, os bool // shown by the chat, by the one-shot
	}{
		{"main answer", event.Event{Type: event.Assistant, Text: "hi"}, false, false},
		{"child message", event.Event{Type: event.Assistant, AgentID: child, Text: "done"}, true, true},
		{"blank child message", event.Event{Type: event.Assistant, AgentID: child, Text: " \n"}, false, false},
		{"call", event.Event{Type: event.ToolCall, ToolName: "read_file"}, true, true},
		{"asked call", event.Event{Type: event.ToolCall, ToolName: "run_command", Asking: true}, false, false},
		{"result", event.Event{Type: event.ToolResult, ToolID: "c9", Output: "ok"}, true, false},
		{"error result", event.Event{Type: event.ToolResult, ToolID: "c9", Output: "no", IsError: true}, true, true},
		{"prompt", event.Event{Type: event.UserMessage, Text: "go"}, false, false},
		{"child's task", event.Event{Type: event.UserMessage, AgentID: child, Text: "go"}, false, false},
		{"delivered", event.Event{Type: event.UserMessage, Text: "also", Priority: "normal"}, true, true},
		{"retry", event.Event{Type: event.Retry, Text: "x"}, true, true},
		{"warning", event.Event{Type: event.Warning, Text: "x"}, true, true},
		{"limit wait", event.Event{Type: event.LimitWait, Text: "x"}, true, true},
		{"breaker", event.Event{Type: event.Breaker, Text: "x"}, true, true},
		{"task", event.Event{Type: event.TaskChanged, Text: "t1 done"}, true, true},
		{"spawned", event.Event{Type: event.AgentSpawned, AgentID: child, Text: "x"}, true, true},
		{"finished", event.Event{Type: event.AgentFinished, AgentID: child}, true, true},
		{"compacted by /compact", event.Event{Type: event.ConversationCompacted, Text: "x",
			Compaction: &conversation.Compaction{Cause: conversation.CompactedByCommand}}, false, false},
		{"compacted to retry", event.Event{Type: event.ConversationCompacted, Text: "x",
			Compaction: &conversation.Compaction{Cause: conversation.CompactedForContextLimit}}, true, true},
		{"error", event.Event{Type: event.Error, Text: "x"}, false, false},
		{"turn", event.Event{Type: event.TurnStarted, Turn: 2}, false, false},
		{"thinking", event.Event{Type: event.Thinking, Text: "hmm"}, false, false},
		{"delta", event.Event{Type: event.TextDelta, Text: "h"}, false, false},
		{"saved", event.Event{Type: event.StateSaved}, false, false},
		{"interrupted", event.Event{Type: event.Interrupted, Text: "x"}, false, false},
		{"result", event.Event{Type: event.RunResult}, false, false},
		{"question", event.Event{Type: event.Question, Text: "x"}, false, false},
		{"decision", event.Event{Type: event.Decision}, false, false},
	} {
		for _, f := range []struct {
			name string
			feed *Feed
			want bool
		}{{"chat", &Feed{AllResults: true}, c.chat}, {"one-shot", &Feed{}, c.os}} {
			l, ok := f.feed.Line(c.ev)
			if ok != f.want {
				t.Errorf("%s: the %s shows it: %v, want %v", c.name, f.name, ok, f.want)
				continue
			}
			if want, _ := EventLine(c.ev); ok && l != want {
				t.Errorf("%s: the %s's line %q is not the vocabulary's %q", c.name, f.name, l, want)
			}
		}
	}
}

// TestFeedSaysAChildsFailureOnce: the agent_finished line of a failed child
// says why; the error result of the spawn_agent call that started it is
// left out, once, and other calls' errors are not.
func TestFeedSaysAChildsFailureOnce(t *testing.T) {
	finished := event.Event{Type: event.AgentFinished, AgentID: "agent-1.1", ToolID: "c1", IsError: true, Text: "gave up"}
	result := event.Event{Type: event.ToolResult, ToolID: "c1", ToolName: "spawn_agent", IsError: true, Output: "gave up"}
	other := event.Event{Type: event.ToolResult, ToolID: "c2", ToolName: "read_file", IsError: true, Output: "gone"}
	for _, f := range []*Feed{{}, {AllResults: true}} {
		if _, ok := f.Line(result); !ok {
			t.Error("a spawn_agent error with no failed child before it is left out")
		}
		if l, ok := f.Line(finished); !ok || l.Text != "agent-1.1 failed: gave up" {
			t.Errorf("agent_finished: %q %v", l.Text, ok)
		}
		if _, ok := f.Line(other); !ok {
			t.Error("another call's error is left out")
		}
		if _, ok := f.Line(result); ok {
			t.Error("the failed child's error is said twice")
		}
		// The call has no other result: a call of the same id later (a
		// resumed session's) is shown.
		if _, ok := f.Line(result); !ok {
			t.Error("the call was not forgotten")
		}
	}
	// A child without a call (the task loop's) leaves nothing behind.
	var f Feed
	f.Line(event.Event{Type: event.AgentFinished, AgentID: "agent-2.1", IsError: true})
	if _, ok := f.Line(event.Event{Type: event.ToolResult, IsError: true, Output: "x"}); !ok {
		t.Error("a result without a call id is left out")
	}
}

// TestDiagnostics are what a one-shot run or a script says on standard
// error without a terminal: each is also shown by a live face.
func TestDiagnostics(t *testing.T) {
	for _, r := range eventRows {
		if !Diagnostic(r.ev) {
			continue
		}
		if _, ok := (&Feed{}).Line(r.ev); !ok {
			t.Errorf("%s is a diagnostic no live face shows", r.ev.Type)
		}
	}
	for _, k := range []event.Type{event.Warning, event.LimitWait, event.Breaker} {
		if !Diagnostic(event.Event{Type: k}) {
			t.Errorf("%s is not a diagnostic", k)
		}
	}
	if Diagnostic(event.Event{Type: event.Error}) || Diagnostic(event.Event{Type: event.ConversationCompacted}) {
		t.Error("an error or a person's /compact is a diagnostic")
	}
}
