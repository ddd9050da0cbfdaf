package render

import "strconv"

// Text attributes a style can switch on. They are bits so that nested
// spans (bold inside italic inside a quote) combine with a plain OR.
const (
	attrBold uint8 = 1 << iota
	attrDim
	attrItalic
	attrUnderline
	attrStrike
)

// style is the look of a run of text. The zero value means "terminal
// default", which is what every run has in plain mode. Colours are stored
// as 256-colour index plus one so that the zero value can mean "unset"
// while colour 0 (black) stays expressible.
type style struct {
	attrs  uint8
	fg, bg uint16
}

// fg256 and bg256 build single-colour styles; the palette below reads
// better with them than with struct literals full of "+1".
func fg256(c uint16) style { return style{fg: c + 1} }
func bg256(c uint16) style { return style{bg: c + 1} }

func attr(a uint8) style { return style{attrs: a} }

// with layers o on top of s: o's colours win where set and attributes
// accumulate, which is how nested inline markup should look.
func (s style) with(o style) style {
	s.attrs |= o.attrs
	if o.fg != 0 {
		s.fg = o.fg
	}
	if o.bg != 0 {
		s.bg = o.bg
	}
	return s
}

func (s style) isZero() bool { return s == style{} }

// appendSGR appends the escape sequence that switches the terminal to s,
// starting from the default rendition. Building it into the caller's
// buffer avoids an allocation per style change. Every parameter is
// followed by ';' and the last one is then turned into the final 'm'.
func (s style) appendSGR(b []byte) []byte {
	b = append(b, "\x1b["...)
	for _, c := range attrCodes {
		if s.attrs&c.bit != 0 {
			b = append(b, c.code, ';')
		}
	}
	if s.fg != 0 {
		b = append(b, "38;5;"...)
		b = strconv.AppendUint(b, uint64(s.fg-1), 10)
		b = append(b, ';')
	}
	if s.bg != 0 {
		b = append(b, "48;5;"...)
		b = strconv.AppendUint(b, uint64(s.bg-1), 10)
		b = append(b, ';')
	}
	if b[len(b)-1] == ';' {
		b[len(b)-1] = 'm'
		return b
	}
	return append(b, '0', 'm')
}

var attrCodes = [...]struct {
	bit  uint8
	code byte
}{{attrBold, '1'}, {attrDim, '2'}, {attrItalic, '3'}, {attrUnderline, '4'}, {attrStrike, '9'}}

const sgrReset = "\x1b[0m"

// The palette follows glamour's "dark" style closely enough that users who
// knew the old renderer see the same colours, using only 256-colour codes
// that every terminal we support understands.
var (
	styleH1        = attr(attrBold).with(fg256(228)).with(bg256(63))
	styleH2        = attr(attrBold).with(fg256(39))
	styleH3        = attr(attrBold).with(fg256(75))
	styleH4        = attr(attrBold).with(fg256(110))
	styleCode      = fg256(203).with(bg256(236))
	styleCodeBlock = fg256(180)
	styleDim       = fg256(244)
	styleRule      = fg256(240)
	styleQuote     = attr(attrItalic).with(fg256(247))
	styleLinkText  = attr(attrUnderline).with(fg256(75))
	styleURL       = attr(attrUnderline).with(fg256(75))
	styleTaskDone  = fg256(78)
	styleTableHead = attr(attrBold)
)

func headingStyle(level int) style {
	switch level {
	case 1:
		return styleH1
	case 2:
		return styleH2
	case 3:
		return styleH3
	}
	return styleH4
}
