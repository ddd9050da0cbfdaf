package text

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The two functions below are the one set of rules for text that ralph did
// not write itself (the model's answers and tool calls, command output,
// task titles, agent names) on its way to a terminal. They live here, in
// the leaf package every layer may import, rather than in scripts/screen/terminal,
// because the approval policy in workers needs Visible and must not import
// a face; neither function needs any fact about the terminal.

// StripControls removes everything from s that a terminal would act on
// instead of print: escape sequences (CSI such as "\x1b[2J", OSC such as
// the window title "\x1b]0;t\x07", DCS, SOS, PM and APC strings, and the
// short ESC sequences), their 8-bit C1 forms, every other C0 or C1
// control character except newline and tab, and the bidirectional
// embedding, override and isolate controls. A carriage return is removed
// too, so "\r\n" becomes "\n" and a line can no longer be overwritten.
// Bytes that are not valid UTF-8 become U+FFFD, since a terminal may read
// a stray byte as the start of a C1 control. Text without any of these is
// returned as it is, without copying.
func StripControls(s string) string {
	if cleanText(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
			i++
		case r == 0x1b:
			i = skipEscape(s, i+1)
		case r >= 0x80 && r <= 0x9f:
			i = skipC1(s, r, i+size)
		case bidiControl(r):
			i += size
		case r == '\n' || r == '\t':
			b.WriteRune(r)
			i += size
		case r < 0x20 || r == 0x7f:
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// bidiControl reports whether r is one of the bidirectional embedding,
// override and isolate controls (U+202A–U+202E, U+2066–U+2069): a
// terminal prints nothing for them but reorders what follows, so the
// text read is not the text sent (a question or a task title that reads
// "approve" and says "evorppa"). Text in right-to-left scripts needs none
// of them to show.
func bidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// cleanText reports whether s holds nothing StripControls would change.
func cleanText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			if c < 0x80 {
				return false
			}
			// Non-ASCII: valid UTF-8 outside the C1 range is fine.
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f || bidiControl(r) {
				return false
			}
			i += size - 1
		}
	}
	return true
}

// skipEscape returns the index just past the escape sequence whose ESC
// byte ended just before i. An unfinished sequence runs to the end of s:
// a terminal would swallow the text after it the same way.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// nF sequences: intermediate bytes, then one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipC1 handles an 8-bit control character r whose encoding ended just
// before i: CSI and the string introducers take their sequence with them.
func skipC1(s string, r rune, i int) int {
	switch r {
	case 0x9b: // CSI
		return skipCSI(s, i)
	case 0x90, 0x98, 0x9d, 0x9e, 0x9f: // DCS, SOS, OSC, PM, APC
		return skipString(s, i)
	}
	return i
}

// skipCSI skips parameter and intermediate bytes and the final byte of a
// control sequence. Anything else ends it early, as terminals do.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips a control string up to and including its terminator:
// BEL, ST ("\x1b\\") or the 8-bit ST (U+009C).
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}

// Visible shows s with nothing hidden, for a person who must judge it (a
// command waiting for approval): ESC is "^[", a carriage return is the two
// characters `\r`, other C0 controls and DEL are in caret notation ("^H",
// "^?"), C1 controls and invisible formatting characters (zero-width and
// bidirectional marks) are `\uXXXX`, and bytes that are not UTF-8 are
// `\xNN`. Newlines and tabs are kept: the caller lays out lines. Printed
// characters, including a backslash or caret already in s, are unchanged,
// so the result is for reading, not for decoding back.
func Visible(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + 0x40)
		case r == 0x7f:
			b.WriteString("^?")
		case r >= 0x80 && r <= 0x9f, unicode.Is(unicode.Cf, r), r == 0x2028, r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
