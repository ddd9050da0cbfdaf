//go:build unix

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	termvt "github.com/ralph-dev/ralph/e2e/vt"
)

// streamOneShot runs `ralph "go on"` in a tmux pane of its own, 100×30,
// its answer 600 words in one paragraph, resizing the window to each of
// resizes while it streams, and returns the pane once ralph has ended.
// ralph starts on the pane's top row, as after `clear`.
func streamOneShot(t *testing.T, resizes []int) (screen string, words int) {
	answer, words := termvt.Numbered(600)
	hold := newStreamGate(t)
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: answer, ChunkSize: 6, ChunkDelayMS: 12, Hold: hold.Wait}
	})
	t.Cleanup(srv.Close)
	// The stream waits until the pane is kept past ralph's exit.
	hold.Hold()
	c := startTmux(t, t.TempDir(), nil, 100, 30, "--base-url", srv.URL, "go on")
	c.tmux("set-option", "-gw", "remain-on-exit", "on")
	hold.Open()
	c.waitFor("the stream to start", 20*time.Second, func(s string) bool { return strings.Contains(s, "w60 ") })
	// As in chat's resize tests, the stream is held for each resize until
	// tmux has read what ralph wrote (settle): a region drawn for the old
	// width and read after the reflow cannot be erased by any count.
	for _, cols := range resizes {
		c.resizeHeld(hold, cols)
	}
	c.waitFor("the one-shot's end", 60*time.Second, func(string) bool {
		return strings.TrimSpace(c.tmux("display-message", "-p", "#{pane_dead}")) == "1"
	})
	return c.screen(), words
}

// `ralph "task"` on a terminal streams its answer in a live region as chat
// does (scripts/screen/live). Started on the screen's top row, each frame
// of it stayed in the scrollback, one under another (1,143 words for 600):
// erasing the region from the top left was, to tmux, clearing the whole
// screen, which it scrolls into the scrollback first (scroll-on-clear).
func TestOneShotFromTheTopRowWordsOnce(t *testing.T) {
	t.Parallel()
	screen, words := streamOneShot(t, nil)
	assertWordsOnce(t, screen, words)
}

// A window made narrower, wider and narrower again while the one-shot's
// answer streams leaves every word on the screen once. The one-shot laid
// the answer out at the size the terminal had when it started and erased
// the rows it drew by their count at that width: rows a narrower terminal
// had reflowed stayed above, under a second copy (183 of 400 words twice
// at 100, 50 and 100 columns).
func TestOneShotResizeMidStreamWordsOnce(t *testing.T) {
	t.Parallel()
	screen, words := streamOneShot(t, []int{50, 100, 40})
	assertWordsOnce(t, screen, words)
}

// The one-shot's status line stays one row in a window narrower than it,
// and after a window made narrower under it: it was drawn whole, wrapped,
// and each tick's clear took back only its last row, so a long command's
// status filled the scrollback ten rows a second (30 rows in 3 s here).
// Made narrower mid-run, a tick tmux reads after its reflow may leave its
// first rows where no erase reaches, as any redraw in flight at a resize
// may (streamWithResizes); ralph cannot stop its ticks for the test, so
// that case allows those two rows and no more.
func TestOneShotStatusLineStaysOneRow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		cols     int
		narrowTo int
		stale    int
	}{{"narrow", 30, 0, 0}, {"made narrower", 100, 30, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := inlineServer(t, `{"name":"sleepy","responses":[
				{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"sleep 3; echo finished-sleeping-with-a-long-command-line\"}"}]},
				{"text":"done"}]}`)
			c := startTmux(t, t.TempDir(), nil, tc.cols, 20, "-y", "--base-url", srv.URL, "go")
			c.tmux("set-option", "-gw", "remain-on-exit", "on")
			c.waitFor("the command's status", 20*time.Second, func(s string) bool { return strings.Count(s, "running `sleep 3") >= 2 })
			if tc.narrowTo > 0 {
				c.tmux("resize-window", "-x", fmt.Sprint(tc.narrowTo), "-y", "20")
			}
			c.waitFor("the one-shot's end", 60*time.Second, func(string) bool {
				return strings.TrimSpace(c.tmux("display-message", "-p", "#{pane_dead}")) == "1"
			})
			s := c.tmux("capture-pane", "-p", "-S", "-")
			stale := 0
			for _, l := range strings.Split(s, "\n") {
				if strings.ContainsAny(l, strings.Join(spinner, "")) {
					stale++
				}
			}
			if stale > tc.stale {
				t.Fatalf("%d rows of status lines stayed on the screen, want at most %d:\n%s", stale, tc.stale, tailOf(s, 3000))
			}
		})
	}
}

// spinner is the status line's first column.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
