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
	// open is a message still arriving; cur its text so far, col the
	// cursor's column, rows the lines ended so far, and word the word
	// held back until it is known whether it fits on the line.
	open  bool
	cur   strings.Builder
	col   int
	rows  int
	word  strings.Builder
	wordW int
	// spaces are held back too: they are written before the next word
	// when it fits on the line, and dropped where the line breaks.
	spaces int
	// last is the last message shown whole, and lastRows the terminal
	// rows it took, for Finish to replace it with its rendering.
	last     string
	lastRows int
}

// delta shows more of the answer; the caller has cleared the status line.
func (a *answerStream) delta(s string) {
	s = text.StripControls(s)
	if s == "" {
		return
	}
	a.open = true
	a.cur.WriteString(s)
	for _, r := range s {
		switch r {
		case '\n':
			a.flushWord()
			a.newline()
		case ' ', '\t':
			a.flushWord()
			a.spaces++
		default:
			a.word.WriteRune(r)
			a.wordW += runewidth.RuneWidth(r)
			if a.width > 0 && a.wordW >= a.width {
				// A word as wide as the line is broken where it must be.
				a.flushWord()
			}
		}
	}
}

// flushWord writes the held-back word, on a new line when it does not
// fit on this one.
func (a *answerStream) flushWord() {
	if a.wordW == 0 && a.word.Len() == 0 {
		return
	}
	if a.width > 0 && a.col > 0 && a.col+a.spaces+a.wordW > a.width {
		a.newline()
	} else if a.spaces > 0 {
		_, _ = io.WriteString(a.out, strings.Repeat(" ", a.spaces))
		a.col += a.spaces
	}
	a.spaces = 0
	_, _ = io.WriteString(a.out, a.word.String())
	a.col += a.wordW
	a.word.Reset()
	a.wordW = 0
}

func (a *answerStream) newline() {
	_, _ = io.WriteString(a.out, "\n")
	a.col, a.spaces = 0, 0
	a.rows++
}

// end closes the message that was arriving: its line is ended, and it is
// remembered as the last one shown.
func (a *answerStream) end() {
	if !a.open {
		return
	}
	a.flushWord()
	if a.col > 0 {
		a.newline()
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
