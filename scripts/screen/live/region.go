package live

import (
	"regexp"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
)

// Region is what a terminal shows of a live region, for a face that
// paints it on its own: the rows shown, directly above the cursor, and
// the terminal's size they were drawn at.
type Region struct {
	shown      []string
	cols, rows int
}

// Fit is called with the terminal's size before the answer is laid out at
// it, at every paint. A terminal made narrower reflows the rows shown
// over more rows, and one made lower pushes its top rows up (tmux, VTE,
// iTerm2 and Windows Terminal all do): the top of the region may now be
// in the scrollback, where no erase reaches, and erasing the rows counted
// before printed them a second time. What is shown then stays, for good,
// and the answer goes on below it, as after a line written under it. A
// held block's status row that fits the new size unchanged (Intact) is
// erased and drawn again as ever. A wider or taller terminal keeps the
// rows as they were; Frame draws them again at the new size.
func (r *Region) Fit(a *Answer, cols, rows int) {
	if len(r.shown) == 0 || (cols >= r.cols && rows >= r.rows) {
		return
	}
	if a.Held() && Intact(r.shown, cols, rows, 1) {
		return
	}
	a.Touched(true, cols, rows)
	r.Forget()
}

// Frame is what writes above for good (after erasing the live region,
// when there is any) and shows rows as the live region, on a terminal of
// cols×height (Fit has looked at it first).
func (r *Region) Frame(above string, rows []string, cols, height int) string {
	resized := len(r.shown) > 0 && (cols != r.cols || height != r.rows)
	var out string
	switch {
	case above == "" && !resized:
		out = Redraw(r.shown, rows)
	default:
		out = Erase(len(r.shown)) + above + Redraw(nil, rows)
	}
	r.shown = append(r.shown[:0], rows...)
	r.cols, r.rows = cols, height
	return out
}

// Forget leaves the rows shown on the screen for good (something was
// written below them).
func (r *Region) Forget() { r.shown = r.shown[:0] }

// Intact reports whether rows drawn above the cursor stay as they are on
// a terminal of cols×height: each narrower than its last column, and room
// for all with below rows under them (the prompt or the status line,
// and a row more should that wrap).
func Intact(rows []string, cols, height, below int) bool {
	if len(rows)+below+1 >= height {
		return false
	}
	for _, r := range rows {
		if v := styleSeq().ReplaceAllString(r, ""); text.ClipWidth(v, cols-1) != v {
			return false
		}
	}
	return true
}

// styleSeq is a style sequence, which takes no room on the screen.
var styleSeq = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;]*m") })

// RowsAbove is how many rows above the cursor a row printed wider now
// shows, the row ending at column end with the cursor at column col, on
// a terminal now width columns wide that reflows it (tmux, VTE, iTerm2,
// Windows Terminal): col/width, but for a row the new width holds exactly
// with the cursor after its last character, which stays one row with the
// cursor past its last column (tmux 3.3a). readline's clean counts them
// the same way (third_party/readline, reflowedRow).
func RowsAbove(col, end, width int) int {
	if width <= 0 {
		return 0
	}
	if col > 0 && col == end && col%width == 0 {
		return col/width - 1
	}
	return col / width
}
