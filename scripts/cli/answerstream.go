package cli

import (
	"io"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/live"
)

// answerStream shows the main agent's answer on the terminal while it
// arrives, as claude and codex do, instead of a spinner until the end.
// The layout is chat's (scripts/screen/live, the one live-answer model): each
// finished block is written rendered, the block in flight shows raw in a
// live region that is never taller than the window, and a block taller
// than that is held back behind one status row and written rendered when
// it ends. A run
// stopped by Ctrl-C keeps on the screen what had arrived. Without colour
// the answer is the model's text as it is (what NO_COLOR asks for): it is
// written as it comes, with nothing to lay out or replace. It lives in the
// progress display, under its mutex, because both write to the same
// terminal: while text streams the status line is not drawn.
type answerStream struct {
	out io.Writer // standard output, a terminal
	// size is its size now, asked at every paint: a window made narrower
	// mid-stream reflowed the rows drawn for the old width, and erasing
	// them by their old count printed them twice (live.Region.Fit). nil,
	// or 0 for unknown, lays out as 80×24.
	size func() (cols, rows int)
	// color renders finished blocks in style (asked once, when the first
	// block is rendered, since deciding may ask the terminal).
	color bool
	style func() string

	ans    live.Answer
	region live.Region
	// open is a message still arriving; last is the last message shown
	// whole, which the final answer need not repeat.
	open bool
	last string
	// plain is the message so far without colour.
	plain strings.Builder
}

// delta shows more of the answer; the caller has cleared the status line.
func (a *answerStream) delta(s string) {
	if s == "" {
		return
	}
	if !a.open {
		a.open = true
		a.ans.Color, a.ans.Style = a.color, a.renderStyle
	}
	if !a.color {
		s = text.StripControls(s)
		a.plain.WriteString(s)
		_, _ = io.WriteString(a.out, s)
		return
	}
	a.ans.Append(s)
	a.paint()
}

// dims is the terminal's size for layout.
func (a *answerStream) dims() (int, int) {
	if a.size == nil {
		return live.Size(0, 0)
	}
	return live.Size(a.size())
}

// renderStyle is the render style, decided once.
func (a *answerStream) renderStyle() string {
	style := ""
	if a.style != nil {
		style = a.style()
	}
	a.style = func() string { return style }
	return style
}

// paint lays out what the model wrote since the last paint at the
// terminal's size now, writes what is final and redraws the live region.
func (a *answerStream) paint() {
	cols, rows := a.dims()
	a.region.Fit(&a.ans, cols, rows)
	a.ans.Layout(cols, rows)
	if out := a.region.Frame(a.ans.Take(), a.ans.Live(), cols, rows); out != "" {
		_, _ = io.WriteString(a.out, out)
	}
	a.ans.Shown()
}

// end closes the message that was arriving: the rest of it is laid out
// and rendered, and it is remembered as the last one shown.
func (a *answerStream) end() {
	if !a.open {
		return
	}
	a.open = false
	if !a.color {
		a.last = a.plain.String()
		a.plain.Reset()
		if !strings.HasSuffix(a.last, "\n") {
			_, _ = io.WriteString(a.out, "\n")
		}
		return
	}
	cols, rows := a.dims()
	a.region.Fit(&a.ans, cols, rows)
	a.last = a.ans.Text()
	a.ans.Finish(a.last, cols, rows)
	a.paint()
	a.region.Forget()
}

// replace closes the streamed answer; it reports whether the final answer
// still needs writing (false: the last message shown is the answer, and
// is on the screen rendered already).
func (a *answerStream) replace(final string) bool {
	a.end()
	final = text.StripControls(final)
	if a.color {
		final = live.Sanitize(final)
	}
	return a.last == "" || strings.TrimSpace(a.last) != strings.TrimSpace(final)
}
