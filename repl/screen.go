package repl

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mattn/go-runewidth"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/render"
)

// screen writes everything that appears above the prompt: the answer as it
// streams, the finished answer rendered as markdown, and one-line progress.
//
// Its writers go through readline, which clears the prompt before each
// write and redraws it after, so every write must end with a newline (the
// clearing erases the whole prompt row). The unfinished last row of a
// streaming answer is therefore printed with a newline too and, while
// nothing else has been printed or typed below it, rewritten in place with
// the next piece ("\x1b[1A" moves up onto it). For the same reason, when the
// turn's answer is complete and its draft is still whole on screen, the
// draft is erased and replaced by the markdown rendered by glamour at the
// terminal's width; a draft that was broken up or scrolled away is left as
// streamed rather than printed twice. Without colour the rendering would
// be the answer as it is, which the draft already shows, so it stays.
type screen struct {
	mu sync.Mutex
	// draftOut draws the streaming answer and its rendering (the terminal).
	draftOut io.Writer
	// infoOut takes progress lines and command output (stderr).
	infoOut io.Writer
	// answerOut, when set, is a standard output that is not the terminal:
	// finished answers are written to it as plain text.
	answerOut io.Writer
	color     bool
	// mdStyle is the render style (dark, light or notty), decided once
	// before the line editor starts reading the terminal.
	mdStyle string
	size    func() (cols, rows int)

	active   bool   // a draft is being streamed
	row      []rune // its unfinished last row
	rowCols  int
	rowShown bool // row is printed, followed by a newline
	rowLast  bool // and nothing was printed or typed below it since
	rows     int  // screen rows the draft occupies, row included
	erasable bool // nothing was printed or typed since the draft began
}

func (s *screen) dims() (int, int) {
	w, h := 80, 24
	if s.size != nil {
		if cw, ch := s.size(); cw > 0 {
			w, h = cw, ch
		}
	}
	return max(w, 20), h
}

// delta streams a piece of the answer.
func (s *screen) delta(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, _ := s.dims()
	var b strings.Builder
	if !s.active {
		s.active, s.erasable, s.rows, s.row, s.rowCols = true, true, 0, nil, 0
	}
	if s.rowShown {
		if s.rowLast {
			b.WriteString("\x1b[1A\r\x1b[2K")
			s.rows--
		} else {
			// Something came below the unfinished row: it stays as it is
			// and the answer goes on from a new row.
			s.row, s.rowCols = nil, 0
		}
		s.rowShown = false
	}
	emit := func(r []rune) {
		b.WriteString(string(r))
		b.WriteByte('\n')
		s.rows++
	}
	for _, r := range sanitizeStream(text) {
		if r == '\n' {
			emit(s.row)
			s.row, s.rowCols = nil, 0
			continue
		}
		rw := runewidth.RuneWidth(r)
		if s.rowCols+rw > w-1 {
			// Wrap at the last space when there is one, like a person would.
			if r == ' ' {
				emit(s.row)
				s.row, s.rowCols = nil, 0
				continue
			}
			if i := lastSpace(s.row); i > 0 {
				rest := append([]rune(nil), s.row[i+1:]...)
				emit(s.row[:i])
				s.row, s.rowCols = rest, runewidth.StringWidth(string(rest))
			} else {
				emit(s.row)
				s.row, s.rowCols = nil, 0
			}
		}
		s.row = append(s.row, r)
		s.rowCols += rw
	}
	if len(s.row) > 0 {
		emit(s.row)
		s.rowShown, s.rowLast = true, true
	}
	if b.Len() > 0 {
		_, _ = io.WriteString(s.draftOut, b.String())
	}
}

// finish shows a turn's complete answer.
func (s *screen) finish(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.reset()
	if strings.TrimSpace(text) == "" {
		return
	}
	if s.answerOut != nil {
		// Standard output is a file or pipe: it gets the plain answer, the
		// terminal keeps the draft it watched.
		text = sanitizeAnswer(text)
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		_, _ = io.WriteString(s.answerOut, text)
		if s.active {
			return
		}
	}
	if s.active && !s.color {
		return
	}
	w, h := s.dims()
	out := render.Markdown(text, render.Options{Width: w, Color: s.color, Style: s.mdStyle})
	switch {
	case !s.active || s.rows == 0:
	case s.erasable && s.rows+2 < h:
		out = fmt.Sprintf("\x1b[%dA\r\x1b[J", s.rows) + out
	default:
		return
	}
	_, _ = io.WriteString(s.draftOut, out)
}

// void erases a draft the model will send again (a retried call), when it
// is still whole on screen, and forgets it.
func (s *screen) void() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, h := s.dims()
	if s.active && s.erasable && s.rows > 0 && s.rows+2 < h {
		_, _ = fmt.Fprintf(s.draftOut, "\x1b[%dA\r\x1b[J", s.rows)
	}
	s.reset()
}

// end leaves the draft on screen as streamed (a cut answer).
func (s *screen) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
}

func (s *screen) reset() {
	s.active, s.row, s.rowCols, s.rowShown, s.rowLast, s.rows, s.erasable = false, nil, 0, false, false, 0, false
}

// touched records that the screen changed below the draft (the user
// submitted a line, or cleared the screen), so it can no longer be
// rewritten in place.
func (s *screen) touched() {
	s.mu.Lock()
	s.erasable, s.rowLast = false, false
	s.mu.Unlock()
}

// line prints one line of progress or a notice.
func (s *screen) line(text string) {
	s.block(text + "\n")
}

// block prints text (which should end with a newline) on the info writer.
func (s *screen) block(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erasable, s.rowLast = false, false
	if text == "" {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, _ = io.WriteString(s.infoOut, text)
}

// markdown renders text for the terminal.
func (s *screen) markdown(md string) string {
	w, _ := s.dims()
	return render.Markdown(md, render.Options{Width: w, Color: s.color, Style: s.mdStyle})
}

func (s *screen) dim(t string) string   { return s.style("2", t) }
func (s *screen) red(t string) string   { return s.style("31", t) }
func (s *screen) bold(t string) string  { return s.style("1", t) }
func (s *screen) green(t string) string { return s.style("32", t) }

func (s *screen) style(code, t string) string {
	if !s.color {
		return t
	}
	return "\x1b[" + code + "m" + t + "\x1b[0m"
}

// lastSpace is the index of the last space in r, or -1.
func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

// sanitizeStream keeps a model's text from driving the terminal: escape
// sequences and control characters other than newlines are removed
// (text.StripControls) and tabs become spaces, so the width of a row is
// known. A sequence split between two pieces of the stream loses its
// introducer with the first piece; what is left of it prints as text.
func sanitizeStream(t string) string {
	return strings.ReplaceAll(text.StripControls(t), "\t", "    ")
}

// clipWidth cuts s to at most n display columns.
func clipWidth(s string, n int) string { return text.ClipWidth(s, n) }

// sanitizeAnswer is a finished answer for a file or pipe: no terminal
// controls, since what is piped on may reach a terminal after all.
func sanitizeAnswer(t string) string { return text.StripControls(t) }
