package live

import "strings"

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
			if (line > 0 || cont) && closes(l, fence) {
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

// closes reports whether the line l closes a code block opened by fence:
// the same character, at least as many, and nothing else.
func closes(l, fence string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// headerOf is what a block cut in two goes on with (Answer.Freeze), so
// that its rest is rendered as the same kind of block: a fenced code
// block's opening line, or a table's header and delimiter rows; "" for
// other blocks, whose rest renders as it is.
func headerOf(block, fence string) string {
	lines := strings.SplitN(block, "\n", 3)
	if fence != "" {
		return lines[0]
	}
	if len(lines) == 3 && strings.HasPrefix(strings.TrimSpace(lines[0]), "|") && isDelimiterRow(lines[1]) {
		return lines[0] + "\n" + lines[1]
	}
	return ""
}

// isDelimiterRow reports whether l is a table's delimiter row (|---|:-:|).
func isDelimiterRow(l string) bool {
	t := strings.TrimSpace(l)
	return strings.Contains(t, "-") && strings.Trim(t, "|:- ") == ""
}
