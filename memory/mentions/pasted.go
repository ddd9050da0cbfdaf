package mentions

import (
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Pasted is a word of a person's prompt written as the path of an image:
// typed, or pasted by a terminal a file was dropped on.
type Pasted struct {
	// Start and End are the word's bytes in the prompt as written, its
	// quotes, escapes and @ included: what a placeholder replaces.
	Start, End int
	// Path is the path the word names, unquoted and unescaped, a file://
	// URL's path decoded; a "~/" stays for the caller to expand.
	Path string
}

// imageExts are the extensions a word must end with to be taken for an
// image's path, as Claude Code takes a pasted path for one; what the file
// holds is known only from its first bytes, once it is read.
var imageExts = []string{".png", ".jpg", ".jpeg", ".gif", ".webp"}

// ImagePaths returns the words of message that are paths of images, in
// order, in every form a terminal or a person writes one: absolute,
// "~/", relative, after an @ (Claude Code's mention), in single or
// double quotes, with backslash-escaped spaces (a dropped file's path in
// most terminals), or a file:// URL. Sentence punctuation after an
// unquoted word is not part of it. Whether the file exists is the
// caller's to find out: a word that names none stays text. Nothing in a
// fenced code block is taken.
func ImagePaths(message string) []Pasted {
	var out []Pasted
	fenced := fencedLines(message)
	for i := 0; i < len(message); {
		r, n := utf8.DecodeRuneInString(message[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		if len(fenced) > 0 && fenced[0][0] <= i {
			// Quoted material (a log piped in as context) names files,
			// it does not show them.
			i, fenced = max(i, fenced[0][1]), fenced[1:]
			continue
		}
		start := i
		word, end, quoted := pastedWord(message, i)
		i = max(end, start+1)
		if !quoted {
			// "(see shot.png)." is about shot.png.
			trimmed := strings.TrimRight(word, ".,;:!?)]>'\"")
			end -= len(word) - len(trimmed)
			word = trimmed
			if lead := len(word) - len(strings.TrimLeft(word, "(<")); lead > 0 && !strings.HasPrefix(word, "@") {
				word, start = word[lead:], start+lead
			}
		}
		if p, ok := imagePath(word); ok {
			out = append(out, Pasted{Start: start, End: end, Path: p})
		}
	}
	return out
}

// pastedWord is the word of s that starts at i, unquoted and unescaped,
// and the index just past it. A word that opens with a quote (after an
// optional @) runs to its closing quote, and is quoted; one whose quote
// never closes is read as an unquoted word.
func pastedWord(s string, i int) (word string, end int, quoted bool) {
	j := i
	if s[j] == '@' {
		j++
	}
	if j < len(s) && (s[j] == '\'' || s[j] == '"') {
		if w, e, ok := quotedWord(s, j); ok && wordEnds(s, e) {
			return w, e, true
		}
	}
	var b strings.Builder
	if j > i {
		b.WriteByte('@')
	}
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if unicode.IsSpace(r) {
			break
		}
		if r == '\\' && j+1 < len(s) {
			// A shell's escape: "\ " is a space of the path, "\(" a
			// parenthesis.
			r2, n2 := utf8.DecodeRuneInString(s[j+1:])
			b.WriteRune(r2)
			j += 1 + n2
			continue
		}
		b.WriteString(s[j : j+n])
		j += n
	}
	return b.String(), j, false
}

// quotedWord is the text between the quote at s[i] and its match, as a
// shell reads it ('…' as it is, "…" with \" and \\ unescaped), with the
// index past the closing quote, and whether there is one. The @ that
// may come before the quote comes back in front of the word.
func quotedWord(s string, i int) (string, int, bool) {
	q := s[i]
	var b strings.Builder
	if i > 0 && s[i-1] == '@' {
		b.WriteByte('@')
	}
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == q:
			return b.String(), j + 1, true
		case q == '"' && s[j] == '\\' && j+1 < len(s) && strings.IndexByte(`"\$`+"`", s[j+1]) >= 0:
			j++
			b.WriteByte(s[j])
		case s[j] == '\n':
			return "", 0, false // a quote is not a path across lines
		default:
			b.WriteByte(s[j])
		}
	}
	return "", 0, false
}

// wordEnds reports whether a word may end at s[i]: the end, white
// space, or sentence punctuation before either ("'a b.png', and").
func wordEnds(s string, i int) bool {
	i += len(s[i:]) - len(strings.TrimLeft(s[i:], ".,;:!?)]"))
	if i == len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

// imagePath is the path word names when it is written as an image's path.
func imagePath(word string) (string, bool) {
	word = strings.TrimPrefix(word, "@")
	if rest, ok := strings.CutPrefix(word, "file://"); ok {
		u, err := url.Parse("file://" + rest)
		if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
			return "", false
		}
		word = u.Path
	}
	if word == "" || strings.Contains(word, "://") || strings.HasPrefix(word, "~") && !strings.HasPrefix(word, "~/") {
		return "", false
	}
	ext := strings.ToLower(path.Ext(word))
	for _, e := range imageExts {
		if ext == e && len(word) > len(e) {
			return word, true
		}
	}
	return "", false
}

// fencedLines are the byte ranges of s's fenced code blocks, fences
// included, in order; an unclosed one runs to the end.
func fencedLines(s string) [][2]int {
	var out [][2]int
	fence, start := "", 0
	for at := 0; at < len(s); {
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at + 1
		}
		trimmed := strings.TrimLeft(s[at:end], " \t")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence, start = f, at
			case strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
				out = append(out, [2]int{start, end})
				fence = ""
			}
		}
		at = end
	}
	if fence != "" {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}
