package render

import "strings"

// finish turns glamour's output into what ralph prints: every line keeps
// only SGR sequences (anything else that reached the output is dropped)
// and loses the padding glamour adds up to the wrap width, blank lines
// at either end go, and the text ends with exactly one newline.
func finish(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimLine(l)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return "\n"
	}
	return strings.Join(lines, "\n") + "\n"
}

const sgrReset = "\x1b[0m"

// trimLine keeps a line's text and SGR sequences up to its last visible
// character, where a space with a background colour (the padding of a
// heading's badge or of inline code) counts as visible and a plain one
// does not. Styles switched on and off with no text between them are
// left out. A line that ends styled gets a reset, so nothing bleeds into
// the next line or the prompt; a line with nothing visible becomes "".
func trimLine(l string) string {
	var b strings.Builder
	b.Grow(len(l))
	keep, styledAtKeep := 0, false    // b up to the last visible character
	run, styledBeforeRun := -1, false // where the SGR sequences since the last text began
	styled, bg := false, false        // the current rendition is not the default; has a background
	for i := 0; i < len(l); {
		c := l[i]
		switch {
		case c == 0x1b:
			n, params, ok := sgr(l[i:])
			if ok {
				if run < 0 {
					run, styledBeforeRun = b.Len(), styled
				}
				if params == "" || params == "0" {
					// Everything switched on since the last text is moot.
					trunc(&b, run)
					if styledBeforeRun {
						b.WriteString(sgrReset)
					}
					styled = false
				} else {
					b.WriteString(l[i : i+n])
					styled = true
				}
				bg = background(bg, params)
			}
			i += n
		case c < 0x20 && c != '\t' || c == 0x7f:
			i++
		default:
			b.WriteByte(c)
			i++
			run = -1
			if c != ' ' && c != '\t' || bg {
				keep, styledAtKeep = b.Len(), styled
			}
		}
	}
	s := b.String()[:keep]
	if styledAtKeep {
		s += sgrReset
	}
	return s
}

// trunc cuts b to n bytes.
func trunc(b *strings.Builder, n int) {
	if n == b.Len() {
		return
	}
	s := b.String()[:n]
	b.Reset()
	b.WriteString(s)
}

// sgr reports the length of the escape sequence at the start of s, its
// parameters, and whether it is an SGR sequence (ESC [ params m). A
// sequence that is not SGR is skipped whole: a CSI up to its final byte,
// anything else as ESC and the byte after it.
func sgr(s string) (n int, params string, ok bool) {
	if len(s) < 2 || s[1] != '[' {
		return min(len(s), 2), "", false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if c >= 0x40 && c <= 0x7e {
			if c != 'm' {
				return i + 1, "", false
			}
			return i + 1, s[2:i], true
		}
		if c < 0x20 || c > 0x3f {
			return i, "", false
		}
	}
	return len(s), "", false
}

// background applies an SGR sequence's parameters to whether a
// background colour is on: 0 (or none) and 49 turn it off; 40–47,
// 100–107 and 48;… turn it on.
func background(on bool, params string) bool {
	fields := strings.Split(params, ";")
	for i := 0; i < len(fields); i++ {
		switch f := fields[i]; {
		case f == "" || f == "0" || f == "49":
			on = false
		case len(f) == 2 && f[0] == '4' && f[1] <= '7', len(f) == 3 && f[:2] == "10" && f[2] <= '7':
			on = true
		case f == "48":
			on = true
			i = skipArgs(fields, i)
		case f == "38" || f == "58":
			// A foreground or underline colour: its arguments are skipped
			// so that "38;5;48" is not read as a background.
			i = skipArgs(fields, i)
		}
	}
	return on
}

// skipArgs returns the index of the last argument of the extended colour
// at fields[i] ("38;5;n" or "38;2;r;g;b").
func skipArgs(fields []string, i int) int {
	if i+1 < len(fields) {
		switch fields[i+1] {
		case "5":
			return i + 2
		case "2":
			return i + 4
		}
	}
	return i
}
