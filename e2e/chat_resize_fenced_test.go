//go:build unix

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 92, item 3: a resize while an answer of fenced code streams, with
// a note typed after the status line, leaves no section raw (```go
// fences) and no status line in the scrollback. The block in flight was
// shown raw, and the rows of it a resize left where they were stayed raw
// for good; it is shown rendered now.

// fencedAnswer is a long answer of sections, each a heading, a paragraph
// and a fenced Go block.
func fencedAnswer(sections int) string {
	var b strings.Builder
	for i := range sections {
		fmt.Fprintf(&b, "## Part %d\n\nThe part %d explains a function in words that wrap at sixty columns.\n\n```go\n", i, i)
		for j := range 6 {
			fmt.Fprintf(&b, "func part%dLine%d() int { return %d }\n", i, j, i*10+j)
		}
		b.WriteString("```\n\n")
	}
	b.WriteString("The end.\n")
	return b.String()
}

// settledPane waits until the pane, less its status line, stays the same
// for a moment: tmux has read what ralph wrote.
func (c *tmuxChat) settledPane() {
	c.t.Helper()
	pane := func() string {
		var keep []string
		for _, l := range strings.Split(c.screen(), "\n") {
			if !strings.Contains(l, "Ctrl-C stops") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	last := pane()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(150 * time.Millisecond)
		now := pane()
		if now == last {
			return
		}
		last = now
	}
	c.t.Fatalf("the pane never settled:\n%s", tailOf(c.screen(), 3000))
}

func TestChatResizeFencedAnswerLeavesNoRawMarkdown(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{100, 30}, {60, 15}} {
		cols, rows := size[0], size[1]
		t.Run(fmt.Sprintf("from-%dx%d", cols, rows), func(t *testing.T) {
			t.Parallel()
			const sections = 10
			hold := newStreamGate(t)
			srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
				return llmtest.Response{Text: fencedAnswer(sections), ChunkSize: 6, ChunkDelayMS: 10, Hold: hold.Wait}
			})
			t.Cleanup(srv.Close)
			c := startTmux(t, t.TempDir(), nil, cols, rows, "chat", "--base-url", srv.URL)
			c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
			c.tmux("send-keys", "explain", "Enter")
			c.waitFor("the stream", 20*time.Second, func(s string) bool { return strings.Contains(s, "part1Line") })
			c.tmux("send-keys", "-l", "a note typed mid-stream")
			other := [2]int{160 - cols, 45 - rows}
			for i, sz := range [][2]int{other, size, other, size} {
				hold.Hold()
				c.settledPane()
				c.tmux("resize-window", "-x", fmt.Sprint(sz[0]), "-y", fmt.Sprint(sz[1]))
				time.Sleep(400 * time.Millisecond)
				hold.Open()
				time.Sleep(time.Duration(300+200*i) * time.Millisecond)
			}
			c.waitFor("the end", 60*time.Second, func(s string) bool {
				return strings.Contains(s, "The end.") && strings.Contains(s, "ralph> a note typed mid-stream")
			})
			time.Sleep(300 * time.Millisecond)
			screen := c.screen()
			if strings.Contains(screen, "```") {
				t.Fatalf("raw markdown in the scrollback:\n%s", tailOf(screen, 6000))
			}
			assertNoStatusLine(t, screen)
			for i := range sections {
				for j := range 6 {
					if n := strings.Count(screen, fmt.Sprintf("part%dLine%d()", i, j)); n != 1 {
						t.Fatalf("part%dLine%d is there %d times, want once:\n%s", i, j, n, tailOf(screen, 6000))
					}
				}
			}
		})
	}
}
