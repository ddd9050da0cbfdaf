package terminal

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// nbHyphen stands in for a hyphen inside a word while text is wrapped.
// It is one cell wide like "-", and no wrapper takes it for a place to
// break, so "up-to-date" and "Ctrl-D" move to the next line whole instead
// of being split after a hyphen.
const nbHyphen = '\u2011'

// Wrap lays s out in lines of at most width cells, for everything ralph
// prints on a terminal: answers, its own messages, approvals and help.
// Lines break at spaces, never inside a word, a hyphenated word or an
// escape sequence; a single word wider than the line (a long URL) is the
// one thing cut, since the terminal would cut it anyway. Widths are
// counted in cells, so wide characters take two. Existing line breaks are
// kept, and width < 1 leaves s as it is.
//
// The layout itself is charmbracelet/x/ansi's (what glamour and lipgloss
// use); this function only keeps hyphens from being break points, which
// that library always treats as such.
func Wrap(s string, width int) string {
	if width < 1 || s == "" {
		return s
	}
	if fits(s, width) {
		return s
	}
	if strings.ContainsRune(s, nbHyphen) {
		// The text has its own non-breaking hyphens, which the restore
		// below would turn into plain ones: wrap it as it is.
		return ansi.Wrap(s, width, "")
	}
	return RestoreHyphens(ansi.Wrap(ProtectHyphens(s, width), width, ""))
}

// fits reports whether every line of s is at most width cells, the common
// case, which is then returned untouched.
func fits(s string, width int) bool {
	for line := range strings.SplitSeq(s, "\n") {
		if len(line) > width && ansi.StringWidth(line) > width {
			return false
		}
	}
	return true
}

// ProtectHyphens replaces each hyphen in a word (a run of characters
// other than white space with a letter or digit in it: "up-to-date",
// "Ctrl-D", "-la") with a
// non-breaking hyphen, so that a word wrapper keeps the word whole;
// RestoreHyphens undoes it. Only words that fit in width cells are
// protected: a longer one has to break somewhere, and after a hyphen is
// the best place. The render package uses the pair around glamour, whose
// wrapper breaks after hyphens too.
func ProtectHyphens(s string, width int) string {
	if !strings.Contains(s, "-") {
		return s
	}
	rs := []rune(s)
	changed := false
	for start := 0; start < len(rs); {
		if unicode.IsSpace(rs[start]) {
			start++
			continue
		}
		end, hyphen, word := start, false, false
		for end < len(rs) && !unicode.IsSpace(rs[end]) {
			hyphen = hyphen || rs[end] == '-'
			word = word || unicode.IsLetter(rs[end]) || unicode.IsDigit(rs[end])
			end++
		}
		// A run of hyphens alone ("-", "---", "|--:|") is markup, not a
		// word: markdown must still see its list markers and rules.
		if hyphen && word && ansi.StringWidth(string(rs[start:end])) <= width {
			for i := start; i < end; i++ {
				if rs[i] == '-' {
					rs[i] = nbHyphen
					changed = true
				}
			}
		}
		start = end
	}
	if !changed {
		return s
	}
	return string(rs)
}

// RestoreHyphens turns the non-breaking hyphens of ProtectHyphens back
// into hyphens.
func RestoreHyphens(s string) string {
	if !strings.ContainsRune(s, nbHyphen) {
		return s
	}
	return strings.ReplaceAll(s, string(nbHyphen), "-")
}

// WrapHanging is Wrap for text laid out in columns, as help screens are:
// a line that does not fit continues under the column its text starts
// in, so "  -m, --model string   the model to use ..." wraps under "the"
// rather than at the left edge. The column is where the last gap of two
// or more spaces in the line's first half ends, or else the line's own
// indentation. Lines that fit are left as they are.
func WrapHanging(s string, width int) string {
	if width < 1 || fits(s, width) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if ansi.StringWidth(line) <= width {
			continue
		}
		col := hangingColumn(line, width)
		head, body := line[:col], line[col:]
		rows := strings.Split(Wrap(body, width-col), "\n")
		pad := strings.Repeat(" ", col)
		for j := range rows {
			if j == 0 {
				rows[j] = head + rows[j]
			} else {
				rows[j] = pad + rows[j]
			}
		}
		lines[i] = strings.Join(rows, "\n")
	}
	return strings.Join(lines, "\n")
}

// hangingColumn is the byte offset in line where its wrapped text goes on
// (see WrapHanging). Only plain spaces count, and a column past half the
// width would leave too narrow a text, so the indentation is taken then.
func hangingColumn(line string, width int) int {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	col := indent
	for i := indent; i+1 < len(line) && i < width/2; i++ {
		if line[i] == ' ' && line[i+1] == ' ' {
			j := i
			for j < len(line) && line[j] == ' ' {
				j++
			}
			if j < width/2 && j < len(line) {
				col = j
			}
			i = j
		}
	}
	if ansi.StringWidth(line[:col]) != col {
		// Wide characters or escapes before the column: keep it simple.
		return indent
	}
	return col
}
