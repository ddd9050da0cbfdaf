//go:build unix

package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestReplayMarksAnUndoneWrite (issue 92, item 10): after chat's /undo
// took a write back, the chat's exit summary no longer counts the file as
// changed, and `ralph chat -c` replays the write marked undone.
func TestReplayMarksAnUndoneWrite(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	url := inlineServer(t, `{"name":"notes","responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"notes.md\",\"content\":\"hi\\n\"}"}]},
		{"text":"wrote the notes"},
		{"text":"fresh"}]}`).URL
	c := startTmux(t, dir, nil, 100, 30, "chat", "--base-url", url)
	c.tmux("set-option", "-g", "remain-on-exit", "on") // the exit summary stays on the pane
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "write the notes", "Enter")
	c.waitFor("the answer", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "wrote the notes") && strings.Count(s, "ralph>") >= 2 && idlePrompt.MatchString(s)
	})
	c.tmux("send-keys", "/undo", "Enter")
	c.waitFor("the undo", 20*time.Second, func(s string) bool { return strings.Contains(s, "put back notes.md") })
	c.tmux("send-keys", "C-d")
	c.waitFor("the exit summary", 20*time.Second, func(s string) bool { return strings.Contains(s, "continues it") })
	if s := c.screen(); !strings.Contains(s, " turns · 0 files changed") {
		t.Errorf("the exit summary counts the undone file:\n%s", tailOf(s, 3000))
	}
	id := sessionIDs(t, dir)[0]
	screen := reopenInTmux(t, dir, url, "chat", "-c")
	if !strings.Contains(screen, "continuing session "+id+": 2 turns · 0 files changed") {
		t.Errorf("the replay's state line counts the undone file:\n%s", tailOf(screen, 3000))
	}
	if !strings.Contains(screen, "↳ wrote 3 bytes to notes.md (undone)") {
		t.Errorf("the replay does not mark the undone write:\n%s", tailOf(screen, 3000))
	}
}
