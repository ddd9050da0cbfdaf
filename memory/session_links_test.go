package memory

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// A fork is a whole copy under the new id that names its origin, without
// the original's checkpoints, and the original's files are untouched.
func TestForkSessionCopiesAndLeavesTheOriginal(t *testing.T) {
	fs := afero.NewMemMapFs()
	s, err := CreateSession(fs, "/p", "a", State{Status: StatusCompleted, Mode: "oneshot"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog("checkpoints", map[string]string{"ref": "refs/ralph/a/1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{"messages.jsonl", "session.json", "checkpoints.jsonl"} {
		b, err := afero.ReadFile(fs, filepath.Join(SessionDir("/p", "a"), name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	if err := ForkSession(fs, "/p", "a", NewID(time.Now())); err != nil {
		t.Fatal(err)
	}
	ids, _ := ListSessions(fs, "/p")
	if len(ids) != 2 {
		t.Fatalf("sessions %v", ids)
	}
	fork := ids[0]
	if fork == "a" {
		fork = ids[1]
	}
	for name, want := range files {
		if got, _ := afero.ReadFile(fs, filepath.Join(SessionDir("/p", "a"), name)); string(got) != string(want) {
			t.Fatalf("the original's %s changed", name)
		}
	}
	if got, _ := afero.ReadFile(fs, filepath.Join(SessionDir("/p", fork), "messages.jsonl")); string(got) != string(files["messages.jsonl"]) {
		t.Fatalf("the fork's messages are not the original's: %q", got)
	}
	if ok, _ := afero.Exists(fs, filepath.Join(SessionDir("/p", fork), "checkpoints.jsonl")); ok {
		t.Fatal("the fork copied the original's checkpoints")
	}
	st, err := LoadSessionState(fs, "/p", fork)
	if err != nil || st.SessionID != fork || st.Mode != "oneshot" {
		t.Fatalf("the fork's state: %+v %v", st, err)
	}
	l, err := LoadLinks(fs, "/p", fork)
	if err != nil || l.ForkedFrom != "a" || len(l.Lines()) != 1 || l.Lines()[0] != "forked from a" {
		t.Fatalf("the fork's links: %+v %v", l, err)
	}
	if l, _ := LoadLinks(fs, "/p", "a"); !l.Empty() {
		t.Fatalf("the original has links: %+v", l)
	}
}

// Links add up without repeats, and a session without links.json has none.
func TestUpdateLinks(t *testing.T) {
	fs := afero.NewMemMapFs()
	for range 2 {
		if err := UpdateLinks(fs, "/p", "a", func(l *Links) { l.HandedOffTo = AddLink(l.HandedOffTo, "b") }); err != nil {
			t.Fatal(err)
		}
	}
	l, err := LoadLinks(fs, "/p", "a")
	if err != nil || len(l.HandedOffTo) != 1 || l.Lines()[0] != "handed off to b" {
		t.Fatalf("%+v %v", l, err)
	}
	if l, err := LoadLinks(fs, "/p", "none"); err != nil || !l.Empty() {
		t.Fatalf("%+v %v", l, err)
	}
}
