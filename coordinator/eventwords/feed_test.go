package eventwords

import (
	"testing"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestFeedRule is the one rule for which events a live face prints, kind
// by kind: the chat (AllResults) and the one-shot's progress and -v lines
// differ only in the results of calls that succeeded.
func TestFeedRule(t *testing.T) {
	child := "agent-1.1"
	for _, c := range []struct {
		name     string
		ev       coordinator.Event
		chat, os bool // shown by the chat, by the one-shot
	}{
		{"main answer", coordinator.Event{Type: coordinator.EventAssistant, Text: "hi"}, false, false},
		{"child message", coordinator.Event{Type: coordinator.EventAssistant, AgentID: child, Text: "done"}, true, true},
		{"blank child message", coordinator.Event{Type: coordinator.EventAssistant, AgentID: child, Text: " \n"}, false, false},
		{"call", coordinator.Event{Type: coordinator.EventToolCall, ToolName: "read_file"}, true, true},
		{"asked call", coordinator.Event{Type: coordinator.EventToolCall, ToolName: "run_command", Asking: true}, false, false},
		{"result", coordinator.Event{Type: coordinator.EventToolResult, ToolID: "c9", Output: "ok"}, true, false},
		{"error result", coordinator.Event{Type: coordinator.EventToolResult, ToolID: "c9", Output: "no", IsError: true}, true, true},
		{"prompt", coordinator.Event{Type: coordinator.EventUserMessage, Text: "go"}, false, false},
		{"child's task", coordinator.Event{Type: coordinator.EventUserMessage, AgentID: child, Text: "go"}, false, false},
		{"delivered", coordinator.Event{Type: coordinator.EventUserMessage, Text: "also", Priority: "normal"}, true, true},
		{"retry", coordinator.Event{Type: coordinator.EventRetry, Text: "x"}, true, true},
		{"warning", coordinator.Event{Type: coordinator.EventWarning, Text: "x"}, true, true},
		{"limit wait", coordinator.Event{Type: coordinator.EventLimitWait, Text: "x"}, true, true},
		{"breaker", coordinator.Event{Type: coordinator.EventBreaker, Text: "x"}, true, true},
		{"task", coordinator.Event{Type: coordinator.EventTaskChanged, Text: "t1 done"}, true, true},
		{"spawned", coordinator.Event{Type: coordinator.EventAgentSpawned, AgentID: child, Text: "x"}, true, true},
		{"finished", coordinator.Event{Type: coordinator.EventAgentFinished, AgentID: child}, true, true},
		{"compacted by /compact", coordinator.Event{Type: coordinator.EventConversationCompacted, Text: "x",
			Compaction: &conversation.Compaction{Cause: conversation.CompactedByCommand}}, false, false},
		{"compacted to retry", coordinator.Event{Type: coordinator.EventConversationCompacted, Text: "x",
			Compaction: &conversation.Compaction{Cause: conversation.CompactedForContextLimit}}, true, true},
		{"error", coordinator.Event{Type: coordinator.EventError, Text: "x"}, false, false},
		{"turn", coordinator.Event{Type: coordinator.EventTurnStarted, Turn: 2}, false, false},
		{"thinking", coordinator.Event{Type: coordinator.EventThinking, Text: "hmm"}, false, false},
		{"delta", coordinator.Event{Type: coordinator.EventTextDelta, Text: "h"}, false, false},
		{"saved", coordinator.Event{Type: coordinator.EventStateSaved}, false, false},
		{"interrupted", coordinator.Event{Type: coordinator.EventInterrupted, Text: "x"}, false, false},
		{"result", coordinator.Event{Type: coordinator.EventResult}, false, false},
		{"question", coordinator.Event{Type: coordinator.EventQuestion, Text: "x"}, false, false},
		{"decision", coordinator.Event{Type: coordinator.EventDecision}, false, false},
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
	finished := coordinator.Event{Type: coordinator.EventAgentFinished, AgentID: "agent-1.1", ToolID: "c1", IsError: true, Text: "gave up"}
	result := coordinator.Event{Type: coordinator.EventToolResult, ToolID: "c1", ToolName: "spawn_agent", IsError: true, Output: "gave up"}
	other := coordinator.Event{Type: coordinator.EventToolResult, ToolID: "c2", ToolName: "read_file", IsError: true, Output: "gone"}
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
	f.Line(coordinator.Event{Type: coordinator.EventAgentFinished, AgentID: "agent-2.1", IsError: true})
	if _, ok := f.Line(coordinator.Event{Type: coordinator.EventToolResult, IsError: true, Output: "x"}); !ok {
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
	for _, k := range []coordinator.EventType{coordinator.EventWarning, coordinator.EventLimitWait, coordinator.EventBreaker} {
		if !Diagnostic(coordinator.Event{Type: k}) {
			t.Errorf("%s is not a diagnostic", k)
		}
	}
	if Diagnostic(coordinator.Event{Type: coordinator.EventError}) || Diagnostic(coordinator.Event{Type: coordinator.EventConversationCompacted}) {
		t.Error("an error or a person's /compact is a diagnostic")
	}
}
