package memory

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestPromptMissing: a conversation that began (its events hold its
// prompt, or its conversation was begun) but holds no message of the
// person's is not continued, in one sentence that shows what its records
// kept; a session that holds its prompt, a chat left without a word and a
// task loop are.
func TestPromptMissing(t *testing.T) {
	fs := afero.NewMemMapFs()
	root := "/p"
	system := conversation.Message{Role: conversation.RoleSystem, Content: "You are ralph"}
	user := conversation.Message{Role: conversation.RoleUser, Content: "first prompt"}
	events := func(id, lines string) {
		if err := afero.WriteFile(fs, filepath.Join(SessionDir(root, id), "events.jsonl"), []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	events("kept", `{"type":"user_message","text":"first prompt"}`+"\n")
	events("lost", `{"type":"user_message","text":"first\nprompt"}`+"\n")
	events("loop", `{"type":"task_changed","output":"a task"}`+"\n")
	for _, tt := range []struct {
		id, mode, status string
		msgs             []conversation.Message
		want             string // "" continues
	}{
		{"kept", "oneshot", StatusInterrupted, []conversation.Message{system, user}, ""},
		{"lost", "oneshot", StatusInterrupted, []conversation.Message{system}, `session lost is not continued: ralph stopped before it saved the session's prompt, "first prompt"; send it again`},
		{"lost", "oneshot", StatusFailed, []conversation.Message{system}, `"first prompt"`},
		{"lost", "chat", StatusInterrupted, nil, `"first prompt"`},
		{"lost", "oneshot", StatusFailed, nil, ""}, // ended before its prompt: a hook refused it
		{"blank", "oneshot", StatusInterrupted, []conversation.Message{system}, "no record holds it"},
		{"empty", "chat", StatusInterrupted, nil, ""},
		{"loop", "run", StatusInterrupted, nil, ""},
	} {
		err := PromptMissing(fs, root, tt.id, State{Mode: tt.mode, Status: tt.status}, tt.msgs)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s (%s): %v, want it continued", tt.id, tt.mode, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s (%s): %v, want one sentence saying %q", tt.id, tt.mode, err, tt.want)
		}
	}
}
