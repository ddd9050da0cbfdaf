// Package vt is a small model of a terminal for tests of what ralph's
// faces show: the end-to-end tests replay a pty's output into it, and the
// package tests of the faces their own output, so both assert on what the
// screen finally shows, scrollback included.
package vt

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Screen is a small terminal emulator for ralph's screen tests: enough of VT100 to
// replay what readline and ralph write (text, CR, LF, backspace, cursor up,
// down and sideways, erase in line and display, home; styles and OSC
// queries are skipped), with tmux's own habit of scrolling the screen into
// the scrollback before an erase below from the top left (its
// scroll-on-clear), so a test can assert
// on what the screen finally shows rather than on the raw byte stream,
// and a garbled redraw shows up as a wrong screen.
type Screen struct {
	cols, rows int
	lines      [][]rune // the visible screen
	scrolled   []string // lines that scrolled off the top
	x, y       int
	pending    []byte // an incomplete escape sequence or UTF-8 rune
}

// New is a screen of cols×rows, empty, the cursor at the top left.
func New(cols, rows int) *Screen {
	v := &Screen{cols: cols, rows: rows}
	for i := 0; i < rows; i++ {
		v.lines = append(v.lines, nil)
	}
	return v
}

// Write shows p as a terminal would.
func (v *Screen) Write(p []byte) (int, error) {
	v.write(p)
	return len(p), nil
}

func (v *Screen) write(p []byte) {
	data := append(v.pending, p...)
	v.pending = nil
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == 0x1b:
			n, ok := v.escape(data[i:])
			if !ok {
				v.pending = append([]byte(nil), data[i:]...)
				return
			}
			i += n
			continue
		case c == '\r':
			v.x = 0
		case c == '\n':
			v.lineFeed()
		case c == '\b':
			if v.x > 0 {
				v.x--
			}
		case c == 7 || c < 0x20:
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 && !utf8.FullRune(data[i:]) {
				v.pending = append([]byte(nil), data[i:]...)
				return
			}
			v.put(r)
			i += size
			continue
		}
		i++
	}
}

func (v *Screen) put(r rune) {
	if v.x >= v.cols {
		v.x = 0
		v.lineFeed()
	}
	line := v.lines[v.y]
	for len(line) <= v.x {
		line = append(line, ' ')
	}
	line[v.x] = r
	v.lines[v.y] = line
	v.x++
}

func (v *Screen) lineFeed() {
	if v.y < v.rows-1 {
		v.y++
		return
	}
	v.scrolled = append(v.scrolled, strings.TrimRight(string(v.lines[0]), " "))
	copy(v.lines, v.lines[1:])
	v.lines[v.rows-1] = nil
}

// escape applies the sequence at the start of b and returns its length, or
// false when b holds only part of it.
func (v *Screen) escape(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] == ']' {
		// An operating system command (ralph's background query) shows
		// nothing; it ends with BEL or ESC \.
		for j := 2; j < len(b); j++ {
			if b[j] == 7 {
				return j + 1, true
			}
			if b[j] == 0x1b && j+1 < len(b) {
				return j + 2, true
			}
		}
		return 0, false
	}
	if b[1] != '[' {
		return 2, true
	}
	j := 2
	for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';' || b[j] == '?') {
		j++
	}
	if j >= len(b) {
		return 0, false
	}
	params, final := string(b[2:j]), b[j]
	n := 1
	if p, err := strconv.Atoi(strings.TrimPrefix(params, "?")); err == nil && !strings.HasPrefix(params, "?") {
		n = p
	}
	clearFrom := func(line []rune, x int) []rune {
		if x < len(line) {
			return line[:x]
		}
		return line
	}
	switch final {
	case 'A':
		v.y = max(0, v.y-max(n, 1))
	case 'B':
		v.y = min(v.rows-1, v.y+max(n, 1))
	case 'C':
		v.x = min(v.cols-1, v.x+max(n, 1))
	case 'D':
		v.x = max(0, v.x-max(n, 1))
	case 'H':
		v.x, v.y = 0, 0
	case 'K':
		if params == "2" {
			v.lines[v.y] = nil
		} else {
			v.lines[v.y] = clearFrom(v.lines[v.y], v.x)
		}
	case 'J':
		if v.x == 0 && v.y == 0 && params == "" {
			// tmux (3.3 and later, scroll-on-clear on by default) takes
			// an erase below from the top left for clearing the whole
			// screen and first scrolls what it shows into the
			// scrollback: a live region erased there stayed above.
			v.pushScreen()
		}
		v.lines[v.y] = clearFrom(v.lines[v.y], v.x)
		for y := v.y + 1; y < v.rows; y++ {
			v.lines[y] = nil
		}
	}
	return j + 1, true
}

// pushScreen scrolls the screen's lines, up to the last that is not
// blank, into the scrollback.
func (v *Screen) pushScreen() {
	last := -1
	for y, l := range v.lines {
		if strings.TrimRight(string(l), " ") != "" {
			last = y
		}
	}
	for y := 0; y <= last; y++ {
		v.scrolled = append(v.scrolled, strings.TrimRight(string(v.lines[y]), " "))
	}
}

// Text is the whole screen, scrolled-off lines included, without trailing
// blank lines.
func (v *Screen) Text() string {
	all := append([]string(nil), v.scrolled...)
	for _, l := range v.lines {
		all = append(all, strings.TrimRight(string(l), " "))
	}
	for len(all) > 0 && all[len(all)-1] == "" {
		all = all[:len(all)-1]
	}
	return strings.Join(all, "\n")
}

// CursorLine is the line the cursor is on.
func (v *Screen) CursorLine() string { return strings.TrimRight(string(v.lines[v.y]), " ") }

// TTY is a writer to the screen through a terminal's output processing
// (ONLCR: a newline is written as CR LF), as a program's output reaches a
// terminal; Write takes bytes as the terminal receives them.
func (v *Screen) TTY() io.Writer { return ttyWriter{v} }

type ttyWriter struct{ v *Screen }

func (w ttyWriter) Write(p []byte) (int, error) {
	w.v.write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n")))
	return len(p), nil
}
