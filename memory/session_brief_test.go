package memory

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/spf13/afero"
)

// A session nobody said a word in is never "the latest": -c and the
// other commands that take the latest go to the conversation before it,
// unless it still runs (a chat open now) or every session is empty.
func TestLatestSkipsEmptySessions(t *testing.T) {
	fs := afero.NewMemMapFs()
	root := "/p"
	now := time.Now().UTC()
	talked := NewID(now.Add(-time.Minute))
	s, err := CreateSession(fs, root, talked, State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "remember the word PELICAN"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(func(st *State) { st.Status = StatusCompleted }); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	empty := NewID(now)
	e, err := CreateSession(fs, root, empty, State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := FindSession(fs, root, ""); id != empty {
		t.Fatalf("latest is %s while the empty chat runs, want it (%s)", id, empty)
	}
	if err := e.SaveState(func(st *State) { st.Status = StatusCompleted }); err != nil {
		t.Fatal(err)
	}
	_ = e.Close()
	if !SessionEmpty(fs, root, empty) || SessionEmpty(fs, root, talked) {
		t.Fatal("SessionEmpty is wrong")
	}
	if id, _ := FindSession(fs, root, ""); id != talked {
		t.Fatalf("latest is %s, want the conversation %s", id, talked)
	}
	if id, _ := FindSession(fs, root, empty); id != empty {
		t.Fatalf("by its id the empty session is still found: %s", id)
	}
	if got := FirstPrompt(fs, root, talked); got != "remember the word PELICAN" {
		t.Fatalf("first prompt %q", got)
	}
	if got := FirstPrompt(fs, root, empty); got != "" {
		t.Fatalf("first prompt of the empty session %q", got)
	}
	_ = fs.Remove(filepath.Join(SessionDir(root, talked), "messages.jsonl"))
	if id, _ := FindSession(fs, root, ""); id != empty {
		t.Fatalf("every session empty: latest is %s, want the newest %s", id, empty)
	}
}

func TestNearestSessions(t *testing.T) {
	ids := []string{"20261125T004501Z-1a2b3c4d5e6f", "20261125T004502Z-0000aaaa1111", "20261124T101010Z-ffffeeeedddd"}
	if got := NearestSessions(ids, "20261125T004501Z-1a2b3c4d5e6e", 2); len(got) == 0 || got[0] != ids[0] {
		t.Errorf("a typo in the last digit: %v", got)
	}
	if got := NearestSessions(ids, "0000aaab", 1); len(got) != 1 || got[0] != ids[1] {
		t.Errorf("a mistyped part: %v", got)
	}
	if got := NearestSessions(ids, "", 3); got != nil {
		t.Errorf("nothing wanted: %v", got)
	}
	_, err := FindSession(afero.NewMemMapFs(), "/none", "x")
	if err == nil {
		t.Error("no sessions at all found one")
	}
}

func TestNearestSessionsIgnoresChance(t *testing.T) {
	ids := []string{"20261125T010549Z-00ec1768d555", "20261125T010545Z-30064bc881cb"}
	if got := NearestSessions(ids, "nosuch", 3); len(got) != 0 {
		t.Errorf("a word with a letter in common is near: %v", got)
	}
}
