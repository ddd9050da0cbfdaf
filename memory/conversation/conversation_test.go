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
	if got := ApplyRefusalMarks(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("ApplyRefusalMarks =\n%+v\nwant\n%+v", got, want)
	}
	if in[3].Refused != "" {
		t.Fatal("ApplyRefusalMarks changed its input")
	}
}
