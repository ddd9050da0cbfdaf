package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
)

// An open chat's status is its own: open, idle or running, whose the
// lock is, its tokens and model, although its files say completed and the
// lock is free while it waits at its prompt.
func TestStatusLiveOfAnOpenChat(t *testing.T) {
	fs := newProject(t)
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusCompleted, Mode: "chat", Model: "old-model", StartedAt: t0})
	must(t, err)
	must(t, s.Close())
	live := Live{SessionID: idA, PID: 4242, Model: "new-model", InputTokens: 1200, OutputTokens: 34}
	r, err := StatusLive(fs, root, t0, live)
	must(t, err)
	text := r.Text()
	for _, want := range []string{"open, idle at this chat's prompt (pid 4242)", "new-model", "1,200 in / 34 out", "let go while this chat waits"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	if regexp.MustCompile(`(?m)^(status\s+completed|lock\s+free)$`).MatchString(text) {
		t.Errorf("says the open chat is done:\n%s", text)
	}
	live.Busy, live.LockHeld = true, true
	r, err = StatusLive(fs, root, t0, live)
	must(t, err)
	if text := r.Text(); !strings.Contains(text, "open, running (this chat, pid 4242)") || !strings.Contains(text, "held by this chat (pid 4242)") {
		t.Errorf("running:\n%s", text)
	}
}
