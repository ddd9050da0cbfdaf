package scripts

import (
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"

	"github.com/ralph-dev/ralph/memory/text"
)

// answerStream shows the main agent's answer on the terminal while it
// arrives, as claude and codex do, instead of a spinner until the end:
// the text as it comes, stripped of terminal controls, then, once the
// run is over, the final answer rendered in its place (Finish). A run
// stopped by Ctrl-C keeps on the screen what had arrived. It lives in
// the progress display, under its mutex, because both write to the same
// terminal: while text streams the status line is not drawn.
type answerStream struct {
	out   io.Writer // standard output, a terminal
	width int       // its width in cells; 0 unknown
	// open is a message still arriving; cur is its text so far.
	open bool
	cur  strings.Builder
	// last is the last message shown whole, and rows the terminal rows it
	// took, for Finish to replace it with its rendering.
	last string
	rows int
}

// delta shows more of the answer; the caller has cleared the status line.
func (a *answerStream) delta(s string) {
	s = text.StripControls(s)
	if s == "" {
		return
	}
	a.open = true
	a.cur.WriteString(s)
	_, _ = io.WriteString(a.out, s)
}

// end closes the message that was arriving: its line is ended, and it is
// remembered as the last one shown.
func (a *answerStream) end() {
	if !a.open {
		return
	}
	shown := a.cur.String()
	if !strings.HasSuffix(shown, "\n") {
		_, _ = io.WriteString(a.out, "\n")
	}
	a.last, a.rows = shown, rowsOf(shown, a.width)
	a.open = false
	a.cur.Reset()
}

// maxErase bounds the rows Finish moves up to replace the streamed answer
// with its rendering: past a screenful the top of the text has scrolled
// away, and moving up would erase the wrong lines, so a longer answer
// stays as it streamed.
const maxErase = 24

// replace takes the streamed answer off the screen when it is final, so
// its rendering goes in its place; it reports whether the answer still
// needs writing (false: the streamed text stays, as it is the answer).
func (a *answerStream) replace(final string) bool {
	a.end()
	if a.last == "" || strings.TrimSpace(a.last) != strings.TrimSpace(text.StripControls(final)) {
		return true
	}
	if a.width <= 0 || a.rows > maxErase {
		return false
	}
	fmt.Fprintf(a.out, "\x1b[%dA\r\x1b[J", a.rows)
	return true
}

// rowsOf is how many terminal rows text takes at width cells a row.
func rowsOf(s string, width int) int {
	rows := 0
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		w := runewidth.StringWidth(strings.ReplaceAll(line, "\t", "        "))
		if width <= 0 || w <= width {
			rows++
			continue
		}
		rows += (w + width - 1) / width
	}
	return rows
}
