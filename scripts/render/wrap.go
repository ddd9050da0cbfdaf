package render

import (
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// widthCond measures display width. East Asian ambiguous characters count
// as narrow whatever the locale: the decorations we draw ourselves (•, │,
// ─, …) are all ambiguous, and mainstream terminals draw them narrow by
// default, so measuring them wide would misalign every list and table.
// A fixed condition also keeps the output independent of the environment.
var widthCond = &runewidth.Condition{EastAsianWidth: false}

// textWidth is the number of terminal columns s occupies. Pure ASCII,
// the common case, skips runewidth's grapheme segmentation entirely.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return widthCond.StringWidth(s)
		}
	}
	return len(s)
}

// piece is one unit of inline layout: a fragment of a word, a breakable
// run of spaces, or a hard line break. Adjacent non-space pieces form one
// word that is only split when it cannot fit on a line by itself.
type piece struct {
	text  string
	w     int // display width of text
	st    style
	space bool // breakable whitespace, dropped at line edges
	brk   bool // hard line break
}

// lineBuilder accumulates one output line, switching styles only when the
// style actually changes and always resetting before the line ends, so no
// colour can bleed into a prefix, the next line, or the user's prompt.
type lineBuilder struct {
	color bool
	buf   []byte
	cur   style
	w     int
}

func (l *lineBuilder) add(s string, w int, st style) {
	if s == "" {
		return // a zero-width break opportunity needs no style switch
	}
	if l.color && st != l.cur {
		if !l.cur.isZero() {
			l.buf = append(l.buf, sgrReset...)
		}
		if !st.isZero() {
			l.buf = st.appendSGR(l.buf)
		}
		l.cur = st
	}
	l.buf = append(l.buf, s...)
	l.w += w
}

// take returns the finished line and resets the builder for the next one.
func (l *lineBuilder) take() string {
	if !l.cur.isZero() {
		l.buf = append(l.buf, sgrReset...)
	}
	s := string(l.buf)
	l.buf, l.cur, l.w = l.buf[:0], style{}, 0
	return s
}

// wrap lays pieces out in lines of at most width columns. Words move to
// the next line whole; a word wider than a whole line is split between
// characters, because overflowing the terminal would make it wrap the
// line anyway, badly and without our indentation.
func wrap(ps []piece, width int, color bool, out []string) []string {
	lb := lineBuilder{color: color}
	var gap *piece // the space waiting to go before the next word
	for i := 0; i < len(ps); {
		p := &ps[i]
		if p.brk {
			out = append(out, lb.take())
			gap = nil
			i++
			continue
		}
		if p.space {
			if lb.w > 0 {
				gap = p
			}
			i++
			continue
		}
		j, ww := i, 0
		for ; j < len(ps) && !ps[j].space && !ps[j].brk; j++ {
			ww += ps[j].w
		}
		if lb.w > 0 {
			gw := 0
			if gap != nil {
				gw = gap.w
			}
			if lb.w+gw+ww > width {
				out = append(out, lb.take())
			} else if gap != nil {
				lb.add(gap.text, gap.w, gap.st)
			}
		}
		gap = nil
		for k := i; k < j; k++ {
			out = placeFragment(&lb, &ps[k], width, out)
		}
		i = j
	}
	if lb.w > 0 || len(lb.buf) > 0 || len(out) == 0 {
		out = append(out, lb.take())
	}
	return out
}

// placeFragment adds one piece of a word, splitting it between characters
// only when the word is too long for the line. Zero-width runes such as
// combining marks stay with the character before them.
func placeFragment(lb *lineBuilder, p *piece, width int, out []string) []string {
	if lb.w+p.w <= width {
		lb.add(p.text, p.w, p.st)
		return out
	}
	start, w := 0, 0
	for i, r := range p.text {
		rw := widthCond.RuneWidth(r)
		if rw > 0 && lb.w+w+rw > width && lb.w+w > 0 {
			lb.add(p.text[start:i], w, p.st)
			out = append(out, lb.take())
			start, w = i, 0
		}
		w += rw
	}
	lb.add(p.text[start:], w, p.st)
	return out
}
