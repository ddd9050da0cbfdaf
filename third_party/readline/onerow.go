package readline

import (
	"bytes"
	"strconv"
)

// ralph's patch: a line shown on one row. ralph's status line is
// readline's prompt while it works, and a message typed there used to wrap
// onto a second row at 60 columns (the prompt and the typed text together
// past the terminal's width); a resize then left the status line's first
// row behind in the scrollback. With Config.FuncOneRow the prompt and the
// line stay one row: the line scrolls sideways under the cursor, cut with
// an ellipsis on either side, and the text itself is kept whole. The
// cursor's column is recorded, so that the row is cleaned even where a
// terminal made narrower reflowed it over several.

// ellipsis marks where the line shown is cut.
const ellipsis = '…'

// oneRow reports whether the line is shown on one row now.
func (r *RuneBuffer) oneRow() bool {
	return r.cfg != nil && r.cfg.FuncOneRow != nil && !r.cfg.EnableMask && r.width > 0 && r.cfg.FuncOneRow()
}

// oneRowOutput is the prompt and the part of the line around the cursor
// that fits on one row with it, the cursor put back where it belongs.
func (r *RuneBuffer) oneRowOutput() []byte {
	if n := len(r.buf); n > 0 && r.buf[n-1] == '\n' && r.idx == n {
		// The line ends (Enter): its last draw ends with the newline, as
		// readline's own does, and leaves the cursor on the next row.
		out := r.oneRowOf(r.buf[:n-1], n-1)
		r.oneRowCol = -1
		return append(out, '\n')
	}
	return r.oneRowOf(r.buf, r.idx)
}

// oneRowOf is oneRowOutput for the line text with the cursor at idx.
func (r *RuneBuffer) oneRowOf(text []rune, idx int) []byte {
	line := r.cfg.Painter.Paint(text, idx)
	if len(line) != len(text) {
		line = text
	}
	shown := make([]rune, len(line))
	for i, c := range line {
		if c == '\t' || c == '\n' {
			c = ' '
		}
		shown[i] = c
	}
	// The last column stays empty: a row that fills it leaves some
	// terminals' cursor past the edge, and the next write wraps.
	room := r.width - 1 - r.promptLen()
	start, end := window(shown, idx, room)
	var buf bytes.Buffer
	buf.WriteString(string(r.prompt))
	col := r.promptLen()
	if start > 0 {
		buf.WriteRune(ellipsis)
		col++
	}
	buf.WriteString(string(shown[start:end]))
	if end < len(shown) {
		buf.WriteRune(ellipsis)
	}
	col += runes.WidthAll(shown[start:idx])
	back := runes.WidthAll(shown[idx:end])
	if end < len(shown) {
		back++
	}
	if back > 0 {
		buf.WriteString("\033[" + strconv.Itoa(back) + "D")
	}
	r.oneRowCol, r.oneRowEnd = col, col+back
	return buf.Bytes()
}

// printedAt records where readline's own print of the line left the
// cursor and the line's end, in columns along the line, for a clean after
// the terminal's width changed (clean, reflowedRow). edge is the print's
// " \b" at a line that fills its last row: the space is on the screen.
// A line with a newline is rows of its own and a tab's width is the
// terminal's, so neither is recorded, nor a masked line; their clean
// counts rows at the width the terminal has now, as readline's does.
func (r *RuneBuffer) printedAt(edge bool) {
	if r.cfg.EnableMask || r.width <= 0 {
		return
	}
	for _, c := range r.buf {
		if c == '\n' || c == '\t' {
			return
		}
	}
	r.printedWidth = r.width
	r.printedCol = r.promptLen() + runes.WidthAll(r.buf[:r.idx])
	r.printedEnd = r.promptLen() + runes.WidthAll(r.buf)
	if edge {
		r.printedEnd++
	}
}

// reflowedRow is the row, counted from the first, that the cursor is on
// when a row printed wider, ending at column end with the cursor at
// column col, is reflowed by a terminal now width columns wide (tmux,
// VTE, iTerm2 and Windows Terminal reflow): col/width, but for a row the
// line fills exactly to the new width with the cursor after its last
// character. That row is not cut in two: the cursor stays on it, past its
// last column, as tmux 3.3a shows it (printf of 60 columns at 100, then
// resize-window -x 60: the cursor at x=60 on the same row). Cleaning a
// row more than that moved up onto the row above, a line of the answer
// in the scrollback, and erased it: a resize from 100 to 60 columns
// whose status line and typed text came to exactly 60 left a blank line
// where a line of code had been.
func reflowedRow(col, end, width int) int {
	if col > 0 && col == end && col%width == 0 {
		return col/width - 1
	}
	return col / width
}

// window is the part of line, [start, end), shown in room columns with
// the cursor at idx: everything when it fits; else the cursor's
// neighbourhood, as much before it as fits (the end of the line, where
// people type, stays in view), leaving a column for each ellipsis and one
// for the cursor at the end of the line.
func window(line []rune, idx, room int) (start, end int) {
	if room < 4 {
		room = 4
	}
	if runes.WidthAll(line)+1 <= room {
		return 0, len(line)
	}
	used := 1
	end = idx
	if idx < len(line) {
		used, end = runes.Width(line[idx]), idx+1
	}
	// marks is the columns the ellipses take for a window [s, e).
	marks := func(s, e int) int {
		n := 0
		if s > 0 {
			n++
		}
		if e < len(line) {
			n++
		}
		return n
	}
	start = idx
	for start > 0 && used+runes.Width(line[start-1])+marks(start-1, end) <= room {
		start--
		used += runes.Width(line[start])
	}
	for end < len(line) && used+runes.Width(line[end])+marks(start, end+1) <= room {
		used += runes.Width(line[end])
		end++
	}
	return start, end
}
