//go:build unix

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	termvt "github.com/ralph-dev/ralph/e2e/vt"
)

// Issue 92, item 11: /help says what a line starting with "!" does in
// each state. At the idle prompt `!command` runs the command (bash mode);
// while ralph works `!message` is urgent. /help described only the second.
func TestHelpSaysWhatBangDoesInEachState(t *testing.T) {
	t.Parallel()
	answer, _ := termvt.Numbered(600)
	js, _ := json.Marshal(answer)
	url := inlineServer(t, `{"name":"bang","loop":true,"responses":[{"text":`+string(js)+`,"chunk_size":6,"chunk_delay_ms":12}]}`).URL
	c := startTmuxChat(t, url, 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "/help", "Enter")
	c.waitFor("the help at the idle prompt", 20*time.Second, func(s string) bool {
		return strings.Contains(squeeze(s), squeeze("ralph is idle now, so !command runs a command"))
	})
	screen := c.screen()
	for _, want := range []string{"!command (like !git status) runs the command at once", "while ralph works, !message is an urgent message"} {
		if !strings.Contains(squeeze(screen), squeeze(want)) {
			t.Fatalf("/help at the idle prompt lacks %q:\n%s", want, tailOf(screen, 5000))
		}
	}
	// What it says is so: !command runs the command at the idle prompt.
	c.tmux("send-keys", "!echo bang-$((6*7))", "Enter")
	c.waitFor("the command's output", 20*time.Second, func(s string) bool { return strings.Contains(s, "bang-42") })
	// While ralph works /help says that ! marks an urgent message now.
	c.tmux("send-keys", "go on", "Enter")
	c.waitFor("the stream to start", 20*time.Second, func(s string) bool { return strings.Contains(s, "w60 ") })
	c.tmux("send-keys", "/help", "Enter")
	c.waitFor("the help while ralph works", 30*time.Second, func(s string) bool {
		return strings.Contains(squeeze(s), squeeze("ralph is working now, so !message is an urgent message"))
	})
}

// squeeze is s without white space: inline code is rendered with a space
// on either side, and rows wrap anywhere.
func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }
