package repl

import (
	"strings"

	"github.com/mattn/go-runewidth"

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
// arrow apart). The parts after the second are left out from the last
// while they do not fit (tokens, agents); then the second, what ralph is
// doing (the model's thinking, a wait, the task loop's pause), is clipped
// to the room left, its newest words kept for the thinking, as long as
// minPart columns of it show, and left out otherwise; then the clock
// alone is cut.
func fitStatus(parts []string, room int) string {
	room -= len([]rune(statusEnd))
	for {
		line := strings.Join(parts, " · ")
		if text.ClipWidth(line, room) == line {
			return line
		}
		if len(parts) > 3 {
			parts = append(parts[:len(parts)-2:len(parts)-2], parts[len(parts)-1])
			continue
		}
		if len(parts) == 3 {
			left := room - runewidth.StringWidth(parts[0]+" ·  · "+parts[2])
			if left >= minPart {
				return parts[0] + " · " + clipPart(parts[1], left) + " · " + parts[2]
			}
			parts = []string{parts[0], parts[2]}
			continue
		}
		return text.ClipWidth(line, max(room, 1))
	}
}

// minPart is the least of what ralph is doing the status line shows
// clipped; less says nothing, and it is left out.
const minPart = 16

// clipPart clips a status part to width columns: the thinking keeps its
// label and its newest words ("thinking: …words"), which are what moves;
// any other part keeps its start.
func clipPart(part string, width int) string {
	const label = "thinking: "
	if !strings.HasPrefix(part, label) {
		return text.ClipWidth(part, width)
	}
	tail := []rune(strings.TrimPrefix(strings.TrimPrefix(part, label), text.Ellipsis))
	keep := width - runewidth.StringWidth(label+text.Ellipsis)
	if keep <= 0 {
		return text.ClipWidth(part, width)
	}
	for len(tail) > 0 && runewidth.StringWidth(string(tail)) > keep {
		tail = tail[1:]
	}
	return label + text.Ellipsis + string(tail)
}
