// Package live lays out an answer that streams to a terminal, for every
// face that shows one (chat above its prompt, the one-shot above its
// status line): one model of what is written for good and what is still
// live, so both faces show the same answer the same way.
//
// The answer is laid out block by block (a paragraph, a list, a fenced
// code block, a table). Finished blocks are written for good, rendered by
// glamour (scripts/screen/render); the block in flight is shown raw in a
// live region just above the prompt, which each paint redraws. The one
// rule: the live region is never taller than the window, so whatever
// scrolls is final and written once. A block in flight may take at most
// half the window; a block that outgrows that (a code block taller than
// the window, a long table) is held back: the live region shows one
// status row instead ("…streaming a long block"), and the block is
// written rendered when it ends. A terminal cannot rewrite its
// scrollback, so a block streamed raw past the window stayed raw there
// for good, fences and all (issue 68); held, none of the raw stream of
// any block ever reaches the scrollback. Only without colour is the
// answer written as it comes, since then the model's text is the output.
package live

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/render"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// Size is the terminal's size for layout. A terminal that reports no size
// (0×0: some CI ptys, script, editors' shells) is taken as 80×24, so that
// its answers are laid out and rendered like any other; the least width
// and height keep a live row and the prompt on the screen.
func Size(cols, rows int) (int, int) {
	if cols <= 0 {
		cols, rows = 80, 24
	}
	if rows <= 0 {
		rows = 24
	}
	return max(cols, 20), max(rows, 2)
}

// Answer is the model of one answer being streamed. It is not safe for
// concurrent use: the face holds its own lock around it.
type Answer struct {
	// Color renders finished blocks; without it the answer is shown as
	// it is, and every finished row is final as it comes.
	Color bool
	// Style is the render style (scripts/screen/render), asked for when the
	// first block is rendered; nil is the dark style.
	Style func() string

	active bool
	got    strings.Builder
	// pending: text was appended and not laid out yet (Append).
	pending bool
	// done is how many bytes of got are laid out: written for good, or,
	// in a raw block, in the row in flight.
	done int
	// raw: the block in flight is streamed raw (the screen changed below
	// the rows of it the live region showed, which stay), so it is not
	// rendered when it ends.
	raw bool
	// held: the block in flight outgrew the live region and is held back
	// until it ends, rendered then; scan is how much of it was looked at
	// for its end (up to the start of its last, unfinished line), seen how
	// far a newline was looked for, and lines how many lines it has.
	held       bool
	scan, seen int
	heldLines  int
	// reopen is what a block cut in two by output below it (Freeze) goes
	// on with: its opening fence or a table's header, so that the rest is
	// rendered as the same kind of block.
	reopen string
	// blockStart is where in got the block in flight starts.
	blockStart int
	// blocks is how many blocks were written, for the blank line that
	// separates blocks as glamour would.
	blocks int
	// fence is the fence of the code block in flight ("" for other
	// blocks), known from its first line; fresh: the raw block in flight
	// has none of its lines laid out yet, so its first line opens it.
	fence string
	fresh bool
	// row is the raw row in flight and midLine whether the text laid out
	// stops inside a line; the rows before row are written.
	row     string
	midLine bool
	// liveEnd is how much of got the live region shows; shownEnd and
	// shownRow are liveEnd and row when the face last showed the region.
	liveEnd, shownEnd int
	shownRow          string
	// liveRow is the part of row the live region shows: up to the last
	// whole word (see wordEnd).
	liveRow string

	out  strings.Builder
	live []string
	// liveKey and liveCols are the markdown and width liveRendered, the
	// live region's rows, were rendered from (renderLive).
	liveKey      string
	liveCols     int
	liveRendered []string
	// liveRaw: the live region shows the block in flight raw, too tall to
	// render at every piece (maxRenderedLive); shownRaw is liveRaw when
	// the face last showed the region.
	liveRaw, shownRaw bool
}

// Held reports whether the block in flight is held back, the live
// region showing its status row.
func (a *Answer) Held() bool { return a.held }

// Active reports whether an answer is streaming.
func (a *Answer) Active() bool { return a.active }

// Text is the answer so far, as laid out (without terminal controls).
func (a *Answer) Text() string { return a.got.String() }

// Write streams a piece of the answer on a terminal of cols×rows.
func (a *Answer) Write(t string, cols, rows int) {
	a.Append(t)
	a.Layout(cols, rows)
}

// Append takes a piece of the answer without laying it out; Layout (or
// any call that lays out) does that later. A face that paints in frames
// appends each piece and lays out once per frame, after it has looked at
// the terminal's size: laid out as it came, a block that ended was
// written for good while the screen still showed it in the live region,
// and a resize before the paint left those rows on the screen for good
// (fitLocked in chat), so the block was there twice.
func (a *Answer) Append(t string) {
	a.active = true
	a.got.WriteString(Sanitize(t))
	a.pending = true
}

// Layout lays out what was appended since the last layout on a terminal
// of cols×rows.
func (a *Answer) Layout(cols, rows int) {
	if a.pending {
		a.layout(false, cols, rows)
	}
}

// Consistent reports whether full, the answer as finished, goes on from
// what was laid out; if pieces were lost on the way (the broker may drop
// deltas for a face that falls behind), it does not.
func (a *Answer) Consistent(full string) bool {
	return strings.HasPrefix(Sanitize(full), a.got.String()[:a.done])
}

// Finish lays out the rest of the answer, full being all of it, and
// renders what is left in the live region; the answer is then over.
// Call Consistent first: what was written for good stays.
func (a *Answer) Finish(full string, cols, rows int) {
	a.active = true
	a.got.Reset()
	a.got.WriteString(Sanitize(full))
	a.done = min(a.done, a.got.Len())
	a.layout(true, cols, rows)
	a.reset()
}

// Freeze writes the block in flight for good, so that output printed
// next goes below it. With colour, what came of the block is rendered as
// a block of its own, and the rest goes on as another (a code block with
// its fence again, a table with its header): the raw stream is never left
// in the scrollback. Without colour it is written as the live region
// shows it, and the answer goes on raw.
func (a *Answer) Freeze(cols int) {
	if !a.active {
		return
	}
	cols, _ = Size(cols, 0)
	got := a.got.String()
	if a.Color && !a.raw {
		rest := got[a.done:]
		if strings.TrimSpace(rest) != "" {
			header := a.reopen
			if header == "" {
				header = headerOf(rest, a.fence)
			}
			md := rest
			if a.fence != "" {
				md = strings.TrimSuffix(md, "\n") + "\n" + a.fence + "\n"
			}
			a.writeBlock(md, cols)
			a.reopen = header
		}
		a.done = len(got)
		a.held, a.scan, a.seen, a.heldLines = false, 0, 0, 0
		a.live = nil
		return
	}
	if rest := got[a.done:]; rest != "" {
		if !a.raw && a.blocks > 0 {
			a.out.WriteString("\n")
		}
		a.feed(rest, cols)
		a.done = len(got)
	}
	a.endRow()
	a.raw = true
	a.live = nil
}

// Shown records that the face shows the live region as Live is now.
func (a *Answer) Shown() { a.shownEnd, a.shownRow, a.shownRaw = a.liveEnd, a.liveRow, a.liveRaw }

// Touched records that the screen changed below the live region (the
// user submitted a line, or cleared the screen): the rows shown stay
// where they are, as final, and the answer goes on raw below them.
func (a *Answer) Touched(shown bool, cols, rows int) {
	if !a.active {
		return
	}
	if shown {
		if a.raw || !a.Color {
			a.row = strings.TrimPrefix(a.row, a.shownRow)
		} else if a.shownEnd > a.done && a.shownRaw {
			got := a.got.String()
			a.done = a.shownEnd
			a.midLine = got[a.done-1] != '\n'
			a.raw = true
		} else if a.shownEnd > a.done {
			// The rows shown are the block so far, rendered
			// (renderLive): they stay as written, and the rest of the
			// block goes on as a block of its own, with its fence or
			// header again, as after Freeze.
			got := a.got.String()
			header := a.reopen
			if header == "" {
				header = headerOf(got[a.blockStart:], a.fence)
			}
			a.done = a.shownEnd
			a.endBlock()
			a.reopen = header
		}
	}
	a.live = nil
	a.layout(false, cols, rows)
}

// Void forgets the answer; what was written for good stays.
func (a *Answer) Void() { a.reset() }

// reset forgets the answer but keeps its settings and the output not
// taken yet.
func (a *Answer) reset() {
	pending := a.out.String()
	*a = Answer{Color: a.Color, Style: a.Style}
	a.out.WriteString(pending)
}

// Take returns the output written for good since the last Take.
func (a *Answer) Take() string {
	s := a.out.String()
	a.out.Reset()
	return s
}

// Live is what the live region shows: rows without newlines.
func (a *Answer) Live() []string { return a.live }

// maxRenderedLive is the most rows of a block in flight the live region
// shows rendered: each piece of the stream renders the block again, and a
// paragraph taller than this (only a tall window holds one) is shown raw,
// as it is, since a paragraph raw reads as it does rendered.
const maxRenderedLive = 24

// liveCut is how much of rest, the block in flight, the live region
// shows: a paragraph up to its last whole word, any other block (code, a
// table, a heading, a list, a quote) up to its last whole line, since
// what the region shows may stay on the screen for good (a line typed
// under it, a resize) and the rest then goes on as a block of its own,
// which must not start inside a line of code, a row or a heading.
func (a *Answer) liveCut(rest string) int {
	if a.fence != "" || a.reopen != "" || !paragraph(rest) {
		return strings.LastIndexByte(rest, '\n') + 1
	}
	return wordEnd(rest)
}

// paragraph reports whether the block t starts is a plain paragraph.
func paragraph(t string) bool {
	l := strings.TrimLeft(t, " ")
	if l == "" {
		return true
	}
	switch l[0] {
	case '#', '-', '*', '+', '>', '|', '`', '~', '=', '_':
		return false
	}
	digits := len(l) - len(strings.TrimLeft(l, "0123456789"))
	return digits == 0 || digits == len(l) || (l[digits] != '.' && l[digits] != ')')
}

// renderLive is the live region's rows for part, the shown part of the
// block in flight: rendered as the block will be when it ends (issue 92:
// shown raw, a block the screen changed below, or a resize left, stayed
// raw in the scrollback, fences and all). A code block is closed for the
// rendering.
func (a *Answer) renderLive(part string, cols int) []string {
	md := part
	if a.reopen != "" {
		if f := fenceOf(a.reopen); f != "" && closes(strings.TrimSpace(md), f) {
			md = ""
		} else {
			md = a.reopen + "\n" + md
		}
	}
	if strings.TrimSpace(md) == "" {
		return nil
	}
	if a.fence != "" {
		md = strings.TrimSuffix(md, "\n") + "\n" + a.fence + "\n"
	}
	if a.liveKey == md && a.liveCols == cols {
		return a.liveRendered
	}
	out := strings.TrimRight(render.Markdown(md, render.Options{Width: cols, Color: true, Style: a.style()}), "\n")
	rows := strings.Split(out, "\n")
	for len(rows) > 0 && strings.TrimSpace(text.StripControls(rows[0])) == "" {
		rows = rows[1:]
	}
	if a.blocks > 0 {
		rows = append([]string{""}, rows...)
	}
	a.liveKey, a.liveCols, a.liveRendered = md, cols, rows
	return rows
}

// holdOn looks for the end of the held block, rest being all of it so
// far, and writes it rendered when it ended (reporting true); until then
// the live region is one status row. Only what came since the last look
// is scanned, so a long block costs time in proportion to its length.
func (a *Answer) holdOn(rest string, eof bool, cols int) bool {
	if !eof && strings.IndexByte(rest[a.seen:], '\n') < 0 {
		a.seen = len(rest)
		a.showHeld(cols)
		return false
	}
	part := rest[a.scan:]
	size, ended := blockEnd(part, a.fence, a.scan > 0 || a.reopen != "", eof)
	if !ended {
		if i := strings.LastIndexByte(part, '\n'); i >= 0 {
			a.heldLines += strings.Count(part[:i+1], "\n")
			a.scan += i + 1
		}
		a.seen = len(rest)
		a.showHeld(cols)
		return false
	}
	a.writeBlock(rest[:a.scan+size], cols)
	a.done += a.scan + size
	a.held, a.scan, a.seen, a.heldLines = false, 0, 0, 0
	return true
}

// HeldStatus is what the live region shows while a block taller than it
// streams: one row, so the person sees the answer go on.
const HeldStatus = "…streaming a long block"

// showHeld makes the held block's status row the live region; none of
// the block's text is shown.
func (a *Answer) showHeld(cols int) {
	a.liveEnd = a.done
	status := HeldStatus
	if a.heldLines > 0 {
		status += " · " + text.Counted(a.heldLines, "line", "lines")
	}
	a.live = []string{dim(text.ClipWidth(status, cols-1))}
}

// dim is ralph's dim style (scripts/screen/view's, which imports this
// package) for the status row.
func dim(s string) string { return "\x1b[2m" + s + "\x1b[22m" }

// writeBlock writes a finished block rendered, after the separator from
// the block before; a block cut in two (Freeze) goes on with its opening
// fence or header.
func (a *Answer) writeBlock(md string, cols int) {
	if a.reopen != "" {
		if f := fenceOf(a.reopen); f != "" && closes(strings.TrimSpace(md), f) {
			// Only the closing fence was left of the block.
			a.reopen = ""
			return
		}
		md = a.reopen + "\n" + md
	}
	out := render.Markdown(md, render.Options{Width: cols, Color: true, Style: a.style()})
	if a.blocks > 0 {
		out = "\n" + out
	}
	a.out.WriteString(out)
	a.endBlock()
}

// endBlock counts a block as written.
func (a *Answer) endBlock() {
	a.raw, a.reopen = false, ""
	a.blocks++
}

func (a *Answer) style() string {
	if a.Style == nil {
		return render.StyleDark
	}
	return a.Style()
}

// feed lays raw text out in rows narrower than the terminal (a row that
// fills the last column leaves some terminals' cursor in limbo): the rows
// before the row in flight are written for good, each ending with a
// newline. Wrapping is greedy (terminal.Wrap, the one layout of what ralph
// prints), so once a later row exists a row is final, and only the row in
// flight is wrapped again as text comes: the cost stays proportional to
// the text, however long the line.
func (a *Answer) feed(s string, cols int) {
	for s != "" {
		line, rest, nl := strings.Cut(s, "\n")
		a.row += line
		// Spaces at the end are wrapped with the word that follows them:
		// alone they could push the row to break early, and the wrapper
		// drops them.
		body := strings.TrimRight(a.row, " ")
		rows := strings.Split(terminal.Wrap(body, cols-1), "\n")
		for _, r := range rows[:len(rows)-1] {
			a.out.WriteString(r + "\n")
		}
		a.row = rows[len(rows)-1] + a.row[len(body):]
		a.midLine = !nl
		if !nl {
			return
		}
		a.out.WriteString(strings.TrimRight(a.row, " ") + "\n")
		a.row = ""
		s = rest
	}
}

// endRow writes the row in flight for good.
func (a *Answer) endRow() {
	if a.midLine {
		a.out.WriteString(strings.TrimRight(a.row, " ") + "\n")
	}
	a.row, a.midLine = "", false
}

// showRow makes the row in flight the live region.
func (a *Answer) showRow() {
	if a.midLine && a.row != "" {
		if n := wordEnd(a.row); n > 0 {
			a.liveRow = a.row[:n]
			a.live = []string{a.liveRow}
		}
	}
}

// wordEnd is how much of t the live region shows: up to the end of its
// last whole word. A word cut by the stream is held back until it ends,
// so that a region kept where it is (a line typed under it, a resize)
// never ends inside a word that then goes on on the next row.
func wordEnd(t string) int {
	if t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\n") {
		return len(t)
	}
	return strings.LastIndexAny(t, " \n") + 1
}

// liveRows are the rows the live region shows for a block in flight.
func liveRows(t string, cols int) []string {
	if t == "" {
		return nil
	}
	return strings.Split(terminal.Wrap(strings.TrimSuffix(t, "\n"), cols-1), "\n")
}

// Redraw is what turns a live region showing prev into one showing next,
// the cursor being at the start of the row below it: the rows they share
// at the top stay, the rest is erased and drawn again.
func Redraw(prev, next []string) string {
	k := 0
	for k < len(prev) && k < len(next) && prev[k] == next[k] {
		k++
	}
	var b strings.Builder
	b.WriteString(Erase(len(prev) - k))
	for _, r := range next[k:] {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.String()
}

// Erase erases the n rows above the cursor, and what is below them, and
// leaves the cursor at the start of the first of them. The first row is
// erased as a row and the rest from the row under it: an erase below from
// the screen's top left is, to tmux (scroll-on-clear, on by default since
// 3.3), the whole screen cleared, whose rows it first scrolls into the
// scrollback, so a live region drawn from the top row (`clear; ralph
// "task"`, a new pane) left each of its frames there, one under another.
// The row under the first is the cursor's own at the least, so moving
// down to it never scrolls.
func Erase(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("\x1b[%dA\r\x1b[2K\x1b[B\x1b[J\x1b[A", n)
}

// Sanitize keeps a model's text from driving the terminal: escape
// sequences and control characters other than newlines are removed
// (text.StripControls) and tabs become spaces, so the width of a row is
// known. A sequence split between two pieces of the stream loses its
// introducer with the first piece; what is left of it prints as text.
func Sanitize(t string) string {
	return strings.ReplaceAll(text.StripControls(t), "\t", "    ")
}
