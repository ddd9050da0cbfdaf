//go:build unix

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// A terminal made narrower reflows the prompt's row: tmux (as VTE and
// iTerm2) cuts a row longer than the new width in two, but a row the new
// width holds exactly stays one row, with the cursor past its last column.
// readline counted a second row there, and its next clean moved up onto
// the row above the prompt and erased it: a line of the answer in the
// scrollback went blank (seen as TestChatResizeFencedAnswerLeavesNoRawMarkdown's
// rare blank line of code at 100 to 60 columns, when the status line and
// the note typed after it came to exactly 60 columns).

// cursorX is the pane's cursor column.
func (c *tmuxChat) cursorX() int {
	c.t.Helper()
	x, err := strconv.Atoi(strings.TrimSpace(c.tmux("display-message", "-p", "#{cursor_x}")))
	if err != nil {
		c.t.Fatal(err)
	}
	return x
}

// steadyCursorX is the cursor's column once three readings in a row agree.
// ralph redraws the status line ten times a second, and a reading taken
// while tmux is between the bytes of a redraw is anywhere on the row: on a
// busy machine one such reading made typeToColumn type 50 x's too many and
// take them back one at a time past its deadline.
func (c *tmuxChat) steadyCursorX() int {
	c.t.Helper()
	x, same := c.cursorX(), 1
	for i := 0; i < 50 && same < 3; i++ {
		time.Sleep(30 * time.Millisecond)
		if now := c.cursorX(); now == x {
			same++
		} else {
			x, same = now, 1
		}
	}
	return x
}

// typeToColumn types x's after what the prompt's row holds, or takes them
// back, until the cursor, at the row's end, is at column col.
func (c *tmuxChat) typeToColumn(col int) {
	c.t.Helper()
	x := -1
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); {
		x = c.steadyCursorX()
		switch {
		case x == col:
			return
		case x < col:
			c.tmux("send-keys", "-l", strings.Repeat("x", col-x))
		default:
			c.tmux("send-keys", "-N", strconv.Itoa(x-col), "BSpace")
		}
		time.Sleep(150 * time.Millisecond)
	}
	c.t.Fatalf("the cursor never came to column %d (it is at %d):\n%s", col, x, tailOf(c.screen(), 2000))
}

// The prompt at rest: a line typed to exactly 60 columns at 100, the
// window made 60 wide, a key pressed: the answer above stays whole.
func TestChatNarrowedToTheTypedLineKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"x","loop":true,"responses":[{"text":"alpha line\n\nomega line"}]}`)
	c := startTmuxChat(t, srv.URL, 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "hi", "Enter")
	c.waitFor("the answer", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "omega line") && idlePrompt.MatchString(s)
	})
	c.typeToColumn(60)
	c.resize(60)
	c.waitFor("the resize", 10*time.Second, func(string) bool {
		return strings.TrimSpace(c.tmux("display-message", "-p", "#{window_width}")) == "60"
	})
	time.Sleep(300 * time.Millisecond)
	c.tmux("send-keys", "-l", "y")
	c.waitFor("the key", 10*time.Second, func(s string) bool { return strings.Contains(s, "xy") })
	if s := c.screen(); !strings.Contains(s, "omega line") || !strings.Contains(s, "alpha line") {
		t.Fatalf("a line of the answer is gone after the resize:\n%s", tailOf(s, 2000))
	}
}

// The status line while an answer streams: the status line and a note
// typed after it come to exactly 60 columns at 100, the window is made
// 60 wide, the answer goes on: every line of it is there once.
func TestChatNarrowedToTheStatusLineKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	hold := newStreamGate(t)
	var mu sync.Mutex
	sent := 0
	lines := make([]string, 8)
	for i := range lines {
		lines[i] = fmt.Sprintf("line%d of the answer", i)
	}
	answer := strings.Join(lines, "\n\n")
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: answer, ChunkSize: 21, ChunkDelayMS: 5, Hold: func() {
			// Two lines, then the stream waits for the resize.
			mu.Lock()
			sent++
			n := sent
			mu.Unlock()
			if n > 4 {
				hold.Wait()
			}
		}}
	})
	t.Cleanup(srv.Close)
	hold.Hold()
	c := startTmuxChat(t, srv.URL, 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "go", "Enter")
	c.waitFor("the status line", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "line1 of the answer") && strings.Contains(s, "Ctrl-C stops")
	})
	// The status line's clock keeps its width from 1 s to 9 s, and the
	// stream is held, so its count of tokens stays too.
	c.tmux("send-keys", "-l", "a note")
	c.typeToColumn(60)
	c.resize(60)
	c.waitFor("the resize", 10*time.Second, func(string) bool {
		return strings.TrimSpace(c.tmux("display-message", "-p", "#{window_width}")) == "60"
	})
	time.Sleep(300 * time.Millisecond)
	hold.Open()
	c.waitFor("the answer's end", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "line7 of the answer") && !strings.Contains(s, "Ctrl-C stops")
	})
	time.Sleep(300 * time.Millisecond)
	s := c.screen()
	for _, l := range lines {
		if n := strings.Count(s, l); n != 1 {
			t.Fatalf("%q is there %d times, want once:\n%s", l, n, tailOf(s, 3000))
		}
	}
}
