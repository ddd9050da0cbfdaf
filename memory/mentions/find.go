// Package mentions is the one reading of @path in text people and agents
// write: which files a markdown text names (Find), as Claude Code reads
// them, and a message with the text of those files attached (Embed),
// read through the door it is given.
package mentions

import (
	"strings"
	"unicode"
)

// Find returns the @paths of markdown text as Claude Code reads them, in
// order and each once: an @ at the start of a line or after white space,
// then the path up to the next white space (trailing sentence punctuation
// dropped), never inside a fenced code block or a code span, so a shell
// line or a decorator quoted in the instructions is not taken for a file.
// An email address (no white space before its @) is none.
func Find(s string) []string {
	var out []string
	seen := map[string]bool{}
	fence := ""
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range lineMentions(withoutCodeSpans(line)) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// fenceOf is the fence a line opens or closes (``` or ~~~, three or more),
// or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// withoutCodeSpans is line with each code span (a run of backticks up to
// the next run of as many) blanked out.
func withoutCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
		run := line[i : i+n]
		end := strings.Index(line[i+n:], run)
		if end < 0 {
			b.WriteString(run)
			i += n
			continue
		}
		b.WriteByte(' ')
		i += n + end + n
	}
	return b.String()
}

// lineMentions are the @paths of one line outside code.
func lineMentions(line string) []string {
	var out []string
	for i := 0; i < len(line); i++ {
		if line[i] != '@' || (i > 0 && !unicode.IsSpace(rune(line[i-1]))) {
			continue
		}
		j := i + 1
		for j < len(line) && !unicode.IsSpace(rune(line[j])) {
			j++
		}
		m := strings.TrimRight(line[i+1:j], ".,;:!?)]\"'")
		if mentionLike(m) {
			out = append(out, m)
		}
		i = j
	}
	return out
}

// mentionLike reports whether m may name a file: it starts as a path
// does (a letter, a digit, ".", "_", "-", "/" or "~/"), as Claude Code
// requires, so "@@", "@#" and a lone "@" name none.
func mentionLike(m string) bool {
	if m == "" {
		return false
	}
	c := rune(m[0])
	switch {
	case unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("._-/", c):
		return true
	case c == '~':
		return strings.HasPrefix(m, "~/")
	}
	return false
}
