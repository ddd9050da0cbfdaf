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

// First words are the person's: the prompt its events record, over
// ralph's wrapping of it in the conversation (a plan's); in an older
// record session_started's text; for a task loop, its first task's title.
func TestFirstPromptIsThePersonsWords(t *testing.T) {
	fs := afero.NewMemMapFs()
	root := "/p"
	for _, c := range []struct{ name, events, want string }{
		{"new", `{"type":"session_started","agent_id":"main","text":"add a login form"}
{"type":"user_message","agent_id":"main","text":"add a login form"}`, "add a login form"},
		{"old", `{"type":"session_started","agent_id":"main","text":"what is 2+2"}`, "what is 2+2"},
		{"run", `{"type":"decision","agent_id":"main","text":"picked"}
{"type":"agent_spawned","agent_id":"agent-0.1","text":"You are working on task T1"}
{"type":"user_message","agent_id":"agent-0.1","text":"You are working on task T1"}
{"type":"task_changed","agent_id":"main","text":"T1 in_progress","output":"validate the e-mail field"}`, "validate the e-mail field"},
	} {
		id := NewID(time.Now().UTC()) + c.name
		s, err := CreateSession(fs, root, id, State{Status: StatusCompleted})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "Plan this feature; do not build it now:\n\nadd a login form"}); err != nil {
			t.Fatal(err)
		}
		if err := afero.WriteFile(fs, LogPath(root, id, EventsLog), []byte(c.events+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := FirstPrompt(fs, root, id); got != c.want {
			t.Errorf("%s: first prompt %q, want %q", c.name, got, c.want)
		}
	}
}

// A session whose prompt never reached the model is told apart from one
// with an exchange, and from a task loop; what was asked at a request's
// first turn is found in its events.
func TestSessionUnreachedAndRequestPrompt(t *testing.T) {
	fs := afero.NewMemMapFs()
	root := "/p"
	mk := func(id string, st State, msgs ...conversation.Message) {
		t.Helper()
		s, err := CreateSession(fs, root, id, State{Status: StatusRunning})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendMessages(msgs...); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveState(func(s *State) { s.Status, s.Mode = st.Status, st.Mode }); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
	}
	user := func(s string) conversation.Message {
		return conversation.Message{Role: conversation.RoleUser, Content: s}
	}
	now := time.Now().UTC()
	unreached, answered, loop := NewID(now), NewID(now.Add(-time.Minute)), NewID(now.Add(-2*time.Minute))
	mk(unreached, State{Status: StatusFailed, Mode: "oneshot"}, conversation.Message{Role: conversation.RoleSystem, Content: "sys"}, user("the lost words"))
	mk(answered, State{Status: StatusCompleted, Mode: "oneshot"}, user("first"), conversation.Message{Role: conversation.RoleAssistant, Content: "an answer"}, user("second"))
	mk(loop, State{Status: StatusFailed, Mode: "run"}, user("a task"))
	if p, ok := SessionUnreached(fs, root, unreached); !ok || p != "the lost words" {
		t.Errorf("unreached: %q %v", p, ok)
	}
	for _, id := range []string{answered, loop} {
		if _, ok := SessionUnreached(fs, root, id); ok {
			t.Errorf("%s taken for a session that never reached its model", id)
		}
	}
	events := `{"type":"user_message","agent_id":"main","text":"first"}
{"type":"turn_started","agent_id":"main","turn":1}
{"type":"turn_started","agent_id":"main","turn":2}
{"type":"user_message","agent_id":"agent-1","text":"a child's task"}
{"type":"user_message","agent_id":"main","text":"second"}
{"type":"turn_started","agent_id":"main","turn":3}
`
	if err := afero.WriteFile(fs, LogPath(root, answered, EventsLog), []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	for req, want := range map[int]string{1: "first", 3: "second", 2: "first", 9: ""} {
		if got := RequestPrompt(fs, root, answered, req); got != want {
			t.Errorf("RequestPrompt(%d) = %q, want %q", req, got, want)
		}
	}
}
