package mcpserve

import (
	"slices"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/spf13/afero"
)

// TestReadSession reads a session's result from its records: the main
// agent's result (not a child's), every file changed once, its status.
func TestReadSession(t *testing.T) {
	fs := afero.NewMemMapFs()
	const root = "/p"
	s, err := memory.CreateSession(fs, root, "20260101-000000-abcd", memory.State{Status: "running", Mode: "oneshot"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []event.Event{
		{Type: event.FilesChanged, Files: []git.FileChange{{Path: "a.go"}, {Path: "b.go"}}},
		{Type: event.RunResult, AgentID: "c1", Result: &event.Result{Text: "child's report"}},
		{Type: event.FilesChanged, Files: []git.FileChange{{Path: "a.go"}}},
		{Type: event.RunResult, AgentID: event.MainAgent, Result: &event.Result{Subtype: "success", Text: "all done"}},
	} {
		if err := s.AppendEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveState(func(st *memory.State) { st.Status = "completed" }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := readSession(fs, root, "abcd")
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID != "20260101-000000-abcd" || res.Status != "completed" || !res.Finished || res.Answer != "all done" || !slices.Equal(res.FilesChanged, []string{"a.go", "b.go"}) {
		t.Fatalf("result = %+v", res)
	}
	if _, err := readSession(fs, root, "nosuch"); err == nil {
		t.Fatal("an unknown session was found")
	}
}
