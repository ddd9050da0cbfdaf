package live

import "strings"

// layout moves what is complete in the answer to the output written for
// good, and sets the live region to the rest. At eof everything is
// complete.
func (a *Answer) layout(eof bool, cols, rows int) {
	a.pending = false
	cols, rows = Size(cols, rows)
	got := a.got.String()
	a.liveEnd = len(got)
	a.live, a.liveRow = nil, ""
	// The live region and the prompt below it fit in the window.
	limit := max(1, min(rows/2, rows-1))
	if !a.Color {
		a.feed(got[a.done:], cols)
		a.done = len(got)
		if eof {
			a.endRow()
		}
		a.showRow()
		return
	}
	for a.layoutStep(got, eof, cols, limit) {
	}
}

// layoutStep lays out the next piece of got that is not laid out yet: the
// rest of a raw row's line, a held block, a raw block, a finished block,
// or the block in flight in the live region. It reports whether more may
// be laid out, so that layout goes on until the answer so far is placed.
func (a *Answer) layoutStep(got string, eof bool, cols, limit int) bool {
	rest := got[a.done:]
	if a.raw && a.midLine {
		return a.finishRawLine(got, eof, cols)
	}
	if !a.raw && !a.held && (a.reopen == "" || fenceOf(a.reopen) == "") {
		// Blank lines between blocks are the separator written with
		// the next block (and end a table cut in two).
		skip := blankPrefix(rest)
		a.done += skip
		rest = rest[skip:]
		if skip > 0 {
			a.reopen = ""
		}
	}
	if rest == "" {
		return false
	}
	if a.held {
		return a.holdOn(rest, eof, cols)
	}
	if !a.raw {
		a.blockStart = a.done
		if a.reopen != "" {
			a.fence = fenceOf(a.reopen)
		} else {
			first, _, _ := strings.Cut(rest, "\n")
			a.fence = fenceOf(first)
		}
	}
	size, ended := blockEnd(rest, a.fence, (a.raw && !a.fresh) || (!a.raw && a.reopen != ""), eof)
	if a.raw {
		a.fresh = a.fresh && size == 0
		a.feed(rest[:size], cols)
		a.done += size
		if !ended {
			a.showRow()
			return false
		}
		a.endRow()
		a.endBlock()
		return true
	}
	if ended {
		a.writeBlock(rest[:size], cols)
		a.done += size
		return true
	}
	return a.showInFlight(rest, cols, limit)
}

// finishRawLine streams the rest of the line the raw row in flight
// belongs to, since a block can only end at the start of a line, and
// reports whether the line ended (so that layout goes on after it).
func (a *Answer) finishRawLine(got string, eof bool, cols int) bool {
	rest := got[a.done:]
	i := strings.IndexByte(rest, '\n')
	if i < 0 {
		a.feed(rest, cols)
		a.done = len(got)
		if !eof {
			a.showRow()
			return false
		}
		a.endRow()
		a.endBlock()
		return false
	}
	// The line may be the fence that closes the block, which the
	// stream cut in two: it was looked for at line starts only,
	// and a code block whose closing fence came in two pieces
	// went on raw to the end of the answer.
	start := strings.LastIndexByte(got[:a.done], '\n') + 1
	closed := a.fence != "" && start > a.blockStart && closes(got[start:a.done+i], a.fence)
	a.feed(rest[:i+1], cols)
	a.done += i + 1
	if closed {
		a.endBlock()
	}
	return true
}

// showInFlight sets the live region to rest, the block in flight, cut
// where what it shows can stay on the screen for good, and rendered when
// it is short enough to render at every piece. A block too tall for the
// region is held instead, and it reports true so that layout goes on
// with the held block.
func (a *Answer) showInFlight(rest string, cols, limit int) bool {
	live := liveRows(rest, cols)
	if a.blocks > 0 {
		live = append([]string{""}, live...)
	}
	cut := len(rest)
	if c := a.liveCut(rest); c < len(rest) && len(live) <= limit {
		cut = c
		a.liveEnd = a.done + cut
		live = liveRows(rest[:cut], cols)
		if a.blocks > 0 {
			live = append([]string{""}, live...)
		}
	}
	a.liveRaw = len(live) > maxRenderedLive
	if len(live) <= limit && !a.liveRaw {
		live = a.renderLive(rest[:cut], cols)
	}
	if len(live) > limit {
		// Too tall to redraw: the block is held back until it ends
		// and written rendered then.
		a.held, a.scan, a.seen, a.heldLines = true, 0, 0, 0
		return true
	}
	a.live = live
	return false
}
