package project

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

func userMessage(s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleUser, Content: s}
}

// lostPromptSession writes the record a crash can leave of a one-shot
// whose session took its name before its prompt was saved (a ralph
// older than issue 67, or a crash of the machine): its state says it
// runs, its conversation holds only the system message, and its events
// say what it was asked.
func lostPromptSession(t *testing.T, dir, id string) {
	t.Helper()
	sd := filepath.Join(dir, memory.SessionsDir, id)
	write(t, filepath.Join(sd, "session.json"), `{"version":1,"session_id":"`+id+`","status":"running","mode":"oneshot"}`+"\n")
	write(t, filepath.Join(sd, "messages.jsonl"), `{"role":"system","content":"You are ralph"}`+"\n")
	write(t, filepath.Join(sd, "events.jsonl"), `{"type":"session_started","text":"first prompt"}`+"\n"+`{"type":"user_message","text":"first prompt"}`+"\n")
}

// TestResumeRefusesASessionWithoutItsPrompt is issue 67's third point:
// -c never continues a session whose prompt is missing. It says so in one
// sentence that shows the prompt its events kept (exit 2), and recovery
// does not advise `ralph resume` for it.
func TestResumeRefusesASessionWithoutItsPrompt(t *testing.T) {
	dir := t.TempDir()
	id := "20261122T074125Z-000aaaaaaaaa"
	lostPromptSession(t, dir, id)
	var notices []string
	_, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Resume: true, SessionID: id,
		Notify: func(s string) { notices = append(notices, s) }})
	if !errors.Is(err, memory.ErrNoSession) || ExitCode(err) != 2 {
		t.Fatalf("resume: %v (exit %d), want no session to continue", err, ExitCode(err))
	}
	msg := err.Error()
	for _, want := range []string{"session " + id + " is not continued", `"first prompt"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("more than one line: %q", msg)
	}
	for _, n := range notices {
		if strings.Contains(n, "continues it") {
			t.Errorf("recovery advises continuing a session without its prompt: %q", n)
		}
	}
	if !strings.Contains(strings.Join(notices, "\n"), "marked it interrupted") {
		t.Errorf("recovery said nothing of the session left running: %q", notices)
	}
}

// TestResumeSaysWhatAHalfMadeSessionWasAsked: a crash before a one-shot's
// session took its name leaves no session, and -c says so in one
// sentence with the prompt the half-made directory held; with an older
// session to go on with, it continues that one and says which prompt was
// not run.
func TestResumeSaysWhatAHalfMadeSessionWasAsked(t *testing.T) {
	dir := t.TempDir()
	getenv := env(t)
	half := filepath.Join(dir, memory.SessionsDir, ".new-20261122T074125Z-000bbbbbbbbb")
	write(t, filepath.Join(half, "session.json"), `{"version":1,"status":"running","mode":"oneshot"}`+"\n")
	write(t, filepath.Join(half, "messages.jsonl"), `{"role":"system","content":"You are ralph"}`+"\n"+`{"role":"user","content":"first prompt"}`+"\n")
	_, err := Open(context.Background(), Options{Dir: dir, Getenv: getenv, Resume: true})
	if !errors.Is(err, memory.ErrNoSession) || !strings.Contains(err.Error(), `"first prompt"`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("resume: %v, want one sentence with the prompt that was not run", err)
	}

	// An older session, then a half-made one: -c continues the older.
	p, err := Open(context.Background(), Options{Dir: dir, Getenv: getenv, Mode: ModeOneShot})
	if err != nil {
		t.Fatal(err)
	}
	older := p.Session.ID
	if err := p.Session.AppendMessages(userMessage("older prompt")); err != nil {
		t.Fatal(err)
	}
	p.EndUnstarted(nil)
	_ = p.Close()
	write(t, filepath.Join(half, "messages.jsonl"), `{"role":"user","content":"second prompt"}`+"\n")
	var notices []string
	p, err = Open(context.Background(), Options{Dir: dir, Getenv: getenv, Resume: true, Notify: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Session.ID != older {
		t.Fatalf("resumed %s, want %s", p.Session.ID, older)
	}
	if all := strings.Join(notices, "\n"); !strings.Contains(all, `"second prompt"`) || !strings.Contains(all, older) {
		t.Fatalf("notices %q do not say which prompt was not run", notices)
	}
}
