package repl

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// The status line is readline's prompt while ralph works, and a message
// can be typed after it. At 60 columns the two together wrapped onto a
// second row ("… Ctrl-C stops › a note typed mid-strea" / "m"), and a
// resize then left the first row behind in the scrollback (issue 92).
// Now the status line is cut to leave room for typing, and readline keeps
// it and the line typed on one row (Config.FuncOneRow, the patched
// readline's onerow.go), scrolling the typed text sideways; the text
// itself is kept whole.

// statusEnd ends the status line, before what is typed.
const statusEnd = " › "

// minTyped is the least room the status line leaves for the typed text.
const minTyped = 10

// isStatusPrompt reports whether the prompt p is the status line.
func isStatusPrompt(p string) bool {
	return strings.HasSuffix(p, statusEnd) && strings.Contains(p, "Ctrl-C stops")
}

// fitStatus joins the status line's parts in room columns (the end's
// arrow apart): the parts between the clock and "Ctrl-C stops" are left
// out from the last while they do not fit, then the clock alone is cut.
func fitStatus(parts []string, room int) string {
	room -= len([]rune(statusEnd))
	for {
		line := strings.Join(parts, " · ")
		if text.ClipWidth(line, room) == line {
			return line
		}
		if len(parts) <= 2 {
			return text.ClipWidth(line, max(room, 1))
		}
		parts = append(parts[:len(parts)-2:len(parts)-2], parts[len(parts)-1])
	}
}
