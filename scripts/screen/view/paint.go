// Package view is how ralph's faces style the words of
// coordinator/eventwords for a person: a palette for the terminal (never
// applied to the model's text, which is stripped of controls first), an
// event's line painted in its style, and the session summaries, pickers
// and replays the faces share.
package view

import (
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/text"
)

// Paint is the line's words cut to width cells (none when width is 0 or
// less), in its style with palette p: an error red, a person's prompt
// bold, the rest dim.
func Paint(l eventwords.Line, p Palette, width int) string {
	s := l.String()
	if width > 0 {
		s = text.ClipWidth(s, width)
	}
	switch l.Style {
	case eventwords.StyleError:
		return p.Red(s)
	case eventwords.StylePrompt:
		return p.Bold(s)
	}
	return p.Dim(s)
}
