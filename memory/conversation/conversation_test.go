package conversation

import (
	"reflect"
	"testing"
)

// TestRefusalMarks: a mark marks the unanswered user messages before it
// and is dropped as the saved conversation is read back; a mark after an
// answer or a tool result marks nothing.
func TestRefusalMarks(t *testing.T) {
	in := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "a"},
		{Role: RoleAssistant, Content: "ok"},
		{Role: RoleUser, Content: "b"},
		{Role: RoleUser, Content: "c"},
		RefusalMark("HTTP 400: no"),
		{Role: RoleUser, Content: "d"},
		{Role: RoleAssistant, Content: "ok"},
		RefusalMark("HTTP 400: nothing to mark"),
	}
	want := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "a"},
		{Role: RoleAssistant, Content: "ok"},
		{Role: RoleUser, Content: "b", Refused: "HTTP 400: no"},
		{Role: RoleUser, Content: "c", Refused: "HTTP 400: no"},
		{Role: RoleUser, Content: "d"},
		{Role: RoleAssistant, Content: "ok"},
	}
	if got := ApplyMarks(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("ApplyMarks =\n%+v\nwant\n%+v", got, want)
	}
	if in[3].Refused != "" {
		t.Fatal("ApplyMarks changed its input")
	}
}

// TestCompactionMark: a compaction mark replaces the conversation before
// it with its summary, keeping the system prompt and the last Kept
// messages, and refusal marks before and after it still apply.
func TestCompactionMark(t *testing.T) {
	in := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "old"},
		{Role: RoleAssistant, Content: "old answer"},
		{Role: RoleUser, Content: "last"},
		{Role: RoleAssistant, Content: "last answer"},
		CompactionMark("SUMMARY", Compaction{Kept: 2, Cause: CompactedByCommand}),
		{Role: RoleUser, Content: "next"},
		RefusalMark("HTTP 400: no"),
	}
	want := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "SUMMARY"},
		{Role: RoleAssistant, Content: SummaryAck},
		{Role: RoleUser, Content: "last"},
		{Role: RoleAssistant, Content: "last answer"},
		{Role: RoleUser, Content: "next", Refused: "HTTP 400: no"},
	}
	if got := ApplyMarks(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("ApplyMarks =\n%+v\nwant\n%+v", got, want)
	}
	// A mark keeping nothing keeps the system prompt and the summary.
	short := []Message{{Role: RoleSystem, Content: "sys"}, {Role: RoleUser, Content: "a"}, CompactionMark("S", Compaction{Kept: 0})}
	if got := ApplyMarks(short); len(got) != 3 || got[1].Content != "S" || got[2].Content != SummaryAck {
		t.Fatalf("kept nothing: %+v", got)
	}
}
