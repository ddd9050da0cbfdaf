package repl

import (
	"strings"

	"github.com/ralph-dev/ralph/scripts/render"
	"github.com/ralph-dev/ralph/scripts/terminal"
)

// answer is the model of the answer being streamed: its text so far and
// how much of it is written for good.
type answer struct {
	active bool
	got    strings.Builder
	// done is how many bytes of got are written for good.
	done int
	// raw: the block in flight is streamed raw (it outgrew the live region,
	// or output came below it), so it is not rendered when it ends.
	raw bool
	// blocks is how many blocks were written, for the blank line that
	// separates rendered blocks as glamour would.
	blocks int
	// rawStarted: the raw block in flight has rows written already.
	rawStarted bool
	// liveEnd is how much of got the live region shows.
	liveEnd int
	// fence is the fence of the code block in flight ("" for other
	// blocks), known from its first line, which a raw block may have
	// written already.
	fence string
}

// layout moves what is complete in the answer from the live region to the
// queue of output written for good, and sets the live region to the rest.
// At eof everything is complete.
func (s *screen) layout(eof bool) {
	w, h := s.dims()
	a := &s.ans
	got := a.got.String()
	a.liveEnd = len(got)
	s.live = nil
	if !s.color {
		// Nothing to render: finished lines are final as they come.
		rest := got[a.done:]
		n := strings.LastIndexByte(rest, '\n') + 1
		if eof {
			n = len(rest)
		}
		s.writeRaw(rest[:n], w)
		a.done += n
		s.live = liveRows(got[a.done:], w)
		return
	}
	for {
		rest := got[a.done:]
		if !a.raw {
			// Blank lines between blocks are the separator written with
			// the next block.
			skip := blankPrefix(rest)
			a.done += skip
			rest = rest[skip:]
		}
		if rest == "" {
			return
		}
		if !a.raw {
			first, _, _ := strings.Cut(rest, "\n")
			a.fence = fenceOf(first)
		}
		size, ended := blockEnd(rest, a.fence, a.raw, eof)
		if a.raw {
			n := strings.LastIndexByte(rest[:size], '\n') + 1
			if ended {
				n = size
			}
			s.writeRawBlock(rest[:n], w)
			a.done += n
			if !ended {
				s.live = liveRows(got[a.done:], w)
				if !a.rawStarted && a.blocks > 0 && len(s.live) > 0 {
					s.live = append([]string{""}, s.live...)
				}
				return
			}
			a.raw, a.rawStarted = false, false
			a.blocks++
			continue
		}
		if ended {
			out := render.Markdown(rest[:size], render.Options{Width: w, Color: true, Style: s.mdStyle})
			if a.blocks > 0 {
				out = "\n" + out
			}
			s.queue = append(s.queue, segment{s.draftOut, out})
			a.done += size
			a.blocks++
			continue
		}
		rows := liveRows(rest, w)
		if len(rows) > max(1, h/2) {
			// Too tall to redraw: the block goes on raw.
			a.raw = true
			continue
		}
		if a.blocks > 0 {
			rows = append([]string{""}, rows...)
		}
		s.live = rows
		return
	}
}

// writeRawBlock writes lines of a raw block for good, after the blank line
// that separates it from the block before.
func (s *screen) writeRawBlock(t string, w int) {
	if t == "" {
		return
	}
	if !s.ans.rawStarted && s.ans.blocks > 0 {
		s.queue = append(s.queue, segment{s.draftOut, "\n"})
	}
	s.ans.rawStarted = true
	s.writeRaw(t, w)
}

// writeRaw queues text for good as rows of the terminal's width.
func (s *screen) writeRaw(t string, w int) {
	if t != "" {
		s.queue = append(s.queue, segment{s.draftOut, s.ans.rawRows(t, w, true)})
	}
}

// rawRows lays text out in rows narrower than the terminal (a row that
// fills the last column leaves some terminals' cursor in limbo), each
// ending with a newline; an unfinished last line gets one too.
func (a *answer) rawRows(t string, w int, _ bool) string {
	t = strings.TrimSuffix(t, "\n")
	return terminal.Wrap(t, w-1) + "\n"
}

// liveRows are the rows the live region shows for text in flight.
func liveRows(t string, w int) []string {
	if t == "" {
		return nil
	}
	return strings.Split(terminal.Wrap(strings.TrimSuffix(t, "\n"), w-1), "\n")
}

// blankPrefix is the length of the complete blank lines t starts with.
func blankPrefix(t string) int {
	n := 0
	for {
		i := strings.IndexByte(t[n:], '\n')
		if i < 0 || strings.TrimSpace(t[n:n+i]) != "" {
			return n
		}
		n += i + 1
	}
}

// blockEnd finds where the markdown block in t ends: after the closing
// fence of a fenced code block, or before a blank line or an opening
// fence otherwise. t starts with the block, or with the rest of it when
// cont (a raw block, part of which is written). It returns the block's
// length and whether it is complete; at eof the block runs to the end of
// t if nothing ends it.
func blockEnd(t, fence string, cont, eof bool) (int, bool) {
	pos := 0
	for line := 0; ; line++ {
		i := strings.IndexByte(t[pos:], '\n')
		if i < 0 {
			if eof {
				return len(t), true
			}
			return len(t), false
		}
		l := t[pos : pos+i]
		next := pos + i + 1
		switch {
		case fence != "":
			if (line > 0 || cont) && strings.HasPrefix(strings.TrimSpace(l), fence) && strings.Trim(strings.TrimSpace(l), fence[:1]) == "" {
				return next, true
			}
		case strings.TrimSpace(l) == "":
			return pos, true
		case (line > 0 || cont) && fenceOf(l) != "":
			return pos, true
		}
		pos = next
	}
}

// fenceOf is the fence a line opens (``` or ~~~, as long as written), or "".
func fenceOf(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return ""
	}
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}
