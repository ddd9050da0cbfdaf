//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Issue 92, item 4: at 60 columns the status line and the message typed
// after it stay one row (the typed text scrolls sideways and is sent
// whole), and an approval question's choices wrap at word boundaries, in
// chat and one-shot; at 100 columns too.

// termSizes are the two sizes the tester used.
var termSizes = [][2]int{{60, 15}, {100, 30}}

// longNote is a message typed while an answer streams, longer than a
// narrow terminal's row.
const longNote = "a note typed mid-stream that goes on well past the edge of a narrow terminal, kept whole"

// visibleRows is the pane as shown, its rows as the terminal has them.
func (c *tmuxChat) visibleRows() []string {
	return strings.Split(strings.TrimRight(c.tmux("capture-pane", "-p"), "\n"), "\n")
}

func TestNarrowStatusLineStaysOneRow(t *testing.T) {
	t.Parallel()
	for _, size := range termSizes {
		cols, rows := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", cols, rows), func(t *testing.T) {
			t.Parallel()
			answer := strings.TrimSpace(strings.Repeat("tick ", 3000))
			js, _ := json.Marshal(answer)
			srv := inlineServer(t, `{"name":"narrow","responses":[{"text":`+string(js)+`,"chunk_size":5,"chunk_delay_ms":5},{"text":"ok, noted"}]}`)
			c := startTmux(t, t.TempDir(), nil, cols, rows, "chat", "--base-url", srv.URL)
			c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
			c.tmux("send-keys", "go on", "Enter")
			c.waitFor("the stream", 20*time.Second, func(s string) bool { return strings.Contains(s, "Ctrl-C stops") })
			c.tmux("send-keys", "-l", longNote)
			deadline := time.Now().Add(10 * time.Second)
			for {
				vis := c.visibleRows()
				last := len(vis) - 1
				for last > 0 && strings.TrimSpace(vis[last]) == "" {
					last--
				}
				row := vis[last]
				if strings.Contains(row, "Ctrl-C stops") && strings.HasSuffix(strings.TrimSpace(row), "kept whole") {
					if w := len([]rune(row)); w >= cols {
						t.Fatalf("the status line takes %d columns of %d:\n%s", w, cols, strings.Join(vis, "\n"))
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the status line and the typed text are not one row (the last row is %q):\n%s", row, strings.Join(vis, "\n"))
				}
				time.Sleep(100 * time.Millisecond)
			}
			c.tmux("send-keys", "Enter")
			c.waitFor("the second answer", 90*time.Second, func(s string) bool {
				return strings.Contains(s, "ok, noted") && idlePrompt.MatchString(s)
			})
			if !sentToModel(srv, longNote) {
				t.Fatalf("the typed message did not reach the model whole:\n%s", endpointSaw(srv))
			}
			assertNoStatusLine(t, c.screen())
		})
	}
}

// questionWordsWhole fails the test when a word of the question shown in
// the pane is cut over two rows: every word of the question, as the rows
// joined read, is a word of one row as the terminal shows them.
func questionWordsWhole(t *testing.T, c *tmuxChat, first string) {
	t.Helper()
	joined := c.tmux("capture-pane", "-p", "-J")
	i := strings.Index(joined, first)
	j := strings.LastIndex(joined, "allow?")
	if i < 0 || j < i {
		t.Fatalf("no question on the pane:\n%s", joined)
	}
	rowWords := map[string]bool{}
	for _, row := range c.visibleRows() {
		for _, w := range strings.Fields(row) {
			rowWords[w] = true
		}
	}
	for _, w := range strings.Fields(joined[i:j]) {
		if !rowWords[w] {
			t.Fatalf("the word %q is cut over two rows:\n%s", w, strings.Join(c.visibleRows(), "\n"))
		}
	}
}

func TestNarrowApprovalChoicesWrapAtWords(t *testing.T) {
	t.Parallel()
	call, _ := json.Marshal(map[string]string{"command": "echo hi && ls -la && git status --short --branch"})
	scenario := func() string {
		js, _ := json.Marshal(string(call))
		return `{"name":"narrow","responses":[{"tool_calls":[{"name":"run_command","arguments":` + string(js) + `}]},{"text":"ok"}]}`
	}
	for _, size := range termSizes {
		cols, rows := size[0], size[1]
		for _, face := range []string{"chat", "one-shot"} {
			t.Run(fmt.Sprintf("%s-%dx%d", face, cols, rows), func(t *testing.T) {
				t.Parallel()
				url := inlineServer(t, scenario()).URL
				var c *tmuxChat
				if face == "chat" {
					c = startTmux(t, t.TempDir(), nil, cols, rows, "chat", "--base-url", url)
					c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
					c.tmux("send-keys", "go", "Enter")
				} else {
					c = startTmux(t, t.TempDir(), nil, cols, rows, "--base-url", url, "go")
				}
				c.waitFor("the question", 20*time.Second, func(s string) bool { return strings.Contains(s, "allow?") })
				time.Sleep(200 * time.Millisecond)
				questionWordsWhole(t, c, "run `echo")
			})
		}
	}
}
