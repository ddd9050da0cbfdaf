package memory

import (
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestSessionNextLeavesTheOldOneBehind(t *testing.T) {
	fs, root := afero.NewOsFs(), t.TempDir()
	s, err := CreateSession(fs, root, NewID(time.Now()), State{Status: StatusRunning, Mode: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	oldID := s.ID
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "my password is SECRET1"}); err != nil {
		t.Fatal(err)
	}
	newID := NewID(time.Now().Add(time.Millisecond))
	if err := s.Next(newID); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	latest, err := FindSession(fs, root, "")
	if err != nil || latest != newID {
		t.Fatalf("latest = %q, %v; want %s", latest, err, newID)
	}
	_, msgs, err := OpenSession(fs, root, newID)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "hello" {
		t.Fatalf("new session's messages = %+v, %v", msgs, err)
	}
	_, msgs, err = OpenSession(fs, root, oldID)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "my password is SECRET1" {
		t.Fatalf("old session's messages = %+v, %v", msgs, err)
	}
	if st, _ := LoadSessionState(fs, root, oldID); st.Status != StatusCompleted || st.Mode != "chat" {
		t.Fatalf("old session's state = %+v", st)
	}
}
