package memory

import (
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestRepairHistory(t *testing.T) {
	call := func(ids ...string) conversation.Message {
		m := conversation.Message{Role: conversation.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, conversation.ToolCall{ID: id, Name: "run_command", Arguments: "{}"})
		}
		return m
	}
	res := func(id string) conversation.Message {
		return conversation.Message{Role: conversation.RoleTool, ToolCallID: id, Content: "ok"}
	}
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "task"},
		call("a", "b"), res("a"), // b missing in the middle: view-only repair
		{Role: conversation.RoleUser, Content: "more"},
		call("c", "d", "e"), res("c"), // d started, e not: appended
	}
	out, appended := RepairHistory(msgs, map[string]bool{"b": true, "d": true})
	if len(appended) != 2 || appended[0].ToolCallID != "d" || appended[0].Content != ResultUncertain ||
		appended[1].ToolCallID != "e" || appended[1].Content != ResultNotStarted {
		t.Fatalf("appended = %+v", appended)
	}
	want := []string{"user", "assistant", "tool:a", "tool:b", "user", "assistant", "tool:c", "tool:d", "tool:e"}
	if len(out) != len(want) {
		t.Fatalf("got %d messages, want %d", len(out), len(want))
	}
	for i, m := range out {
		got := m.Role
		if m.Role == conversation.RoleTool {
			got += ":" + m.ToolCallID
		}
		if got != want[i] {
			t.Fatalf("message %d = %s, want %s", i, got, want[i])
		}
	}
	if out[3].Content != ResultUncertain {
		t.Fatalf("b started, so its outcome is unknown: %q", out[3].Content)
	}
	// A valid history is returned unchanged with nothing to append.
	ok := []conversation.Message{{Role: conversation.RoleUser}, call("x"), res("x"), {Role: conversation.RoleAssistant, Content: "done"}}
	out, appended = RepairHistory(ok, nil)
	if len(appended) != 0 || len(out) != len(ok) {
		t.Fatalf("a valid history was changed: %+v", out)
	}
	// Only a history with a call left unanswered needs the started calls.
	if Unanswered(ok) || !Unanswered(msgs) || !Unanswered(msgs[:3]) || Unanswered(msgs[:1]) {
		t.Fatalf("Unanswered: whole %v, gaps %v, gap in the middle %v, no calls %v", Unanswered(ok), Unanswered(msgs), Unanswered(msgs[:3]), Unanswered(msgs[:1]))
	}
}

func TestRepairHistoryLeavesOutEmptyAssistantMessages(t *testing.T) {
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "hi"},
		{Role: conversation.RoleAssistant},
		{Role: conversation.RoleUser, Content: "again"},
		{Role: conversation.RoleAssistant, Content: "ok"},
	}
	got, appended := RepairHistory(msgs, nil)
	if len(got) != 3 || got[1].Role != conversation.RoleUser || len(appended) != 0 {
		t.Fatalf("repaired = %+v, appended %+v", got, appended)
	}
}
