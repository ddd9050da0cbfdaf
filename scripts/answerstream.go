package scripts

import (
	"fmt"
	"io"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/terminal"
)

// answerStream shows the main agent's answer on the terminal while it
// arrives, as claude and codex do, instead of a spinner until the end:
// the text as it comes, stripped of terminal controls and wrapped at
// words to the terminal's width, then, once the run is over, the final
// answer rendered in its place (Finish). A run stopped by Ctrl-C keeps on
// the screen what had arrived. It lives in the progress display, under
// its mutex, because both write to the same terminal: while text streams
// the status line is not drawn. Wrapping itself, rather than leaving it
// to the terminal, keeps every line within the width and tells exactly
// how many rows the answer took, which replacing it needs.
type answerStream struct {
	out   io.Writer // standard output, a terminal
	width int       // its width in cells; 0 unknown: no wrapping
	// height is its rows; 0 unknown: the answer is never replaced.
	height int
	// open is a message still arriving; cur its text so far and rows the
	// terminal rows it has ended so far.
	open bool
	cur  strings.Builder
	rows int
	// row is the text of the row in flight (after the last row ended),
	// and shown how many of its bytes are on the terminal: whole words
	// only, since the next word decides whether the row breaks before it.
	row   string
	shown int
	// last is the last message shown whole, and lastRows the terminal
	// rows it took, for Finish to replace it with its rendering.
	last     string
	lastRows int
}

// delta shows more of the answer; the caller has cleared the status line.
//
// The layout is terminal.Wrap's, the one every other text ralph prints
// goes through. Wrapping is greedy, so the rows before the last are final
// once a later row exists, and only the row in flight is wrapped again as
// text comes: the cost stays proportional to the text, however long the
// line.
func (a *answerStream) delta(s string) {
	s = text.StripControls(s)
	if s == "" {
		return
	}
	a.open = true
	a.cur.WriteString(s)
	for {
		line, rest, nl := strings.Cut(s, "\n")
		a.row += line
		a.lay(nl)
		if !nl {
			return
		}
		s = rest
	}
}

// lay writes what is final of the row in flight; ended: the line ended
// there, so all of it is.
func (a *answerStream) lay(ended bool) {
	rows := []string{a.row}
	if a.width > 0 {
		// Spaces at the end are wrapped with the word that follows them:
		// alone they could push the row to break early, and the wrapper
		// drops them.
		body := strings.TrimRight(a.row, " \t")
		rows = strings.Split(terminal.Wrap(body, a.width), "\n")
		rows[len(rows)-1] += a.row[len(body):]
	}
	for _, r := range rows[:len(rows)-1] {
		a.write(r)
		a.newline()
	}
	a.row = rows[len(rows)-1]
	if ended {
		a.write(a.row)
		a.newline()
		return
	}
	// Of the row in flight, the words followed by a space are shown: they
	// stay on this row whatever comes. The spaces after them wait, since
	// the row may break there.
	if i := strings.LastIndexAny(a.row, " \t"); i >= 0 {
		a.write(strings.TrimRight(a.row[:i], " \t"))
	}
}

// write shows the row in flight up to the end of done, which extends what
// is shown of it.
func (a *answerStream) write(done string) {
	if len(done) > a.shown {
		_, _ = io.WriteString(a.out, done[a.shown:])
		a.shown = len(done)
	}
}

func (a *answerStream) newline() {
	_, _ = io.WriteString(a.out, "\n")
	a.row, a.shown = "", 0
	a.rows++
}

// end closes the message that was arriving: its line is ended, and it is
// remembered as the last one shown.
func (a *answerStream) end() {
	if !a.open {
		return
	}
	if a.row != "" {
		a.lay(true)
	}
	a.last, a.lastRows = a.cur.String(), a.rows
	a.open, a.rows = false, 0
	a.cur.Reset()
}

// replace takes the streamed answer off the screen when it is final, so
// its rendering goes in its place; it reports whether the answer still
// needs writing (false: the streamed text stays, as it is the answer).
func (a *answerStream) replace(final string) bool {
	a.end()
	if a.last == "" || strings.TrimSpace(a.last) != strings.TrimSpace(text.StripControls(final)) {
		return true
	}
	// Past a screenful (less the status line below it) the top of the
	// text has scrolled away, and moving up would erase the wrong lines,
	// so a longer answer stays as it streamed.
	if a.width <= 0 || a.height <= 1 || a.lastRows > a.height-1 {
		return false
	}
	fmt.Fprintf(a.out, "\x1b[%dA\r\x1b[J", a.lastRows)
	return true
}
