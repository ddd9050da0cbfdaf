// Package text cuts strings to a size without breaking them. It is a leaf
// package so that the model-facing layers, the stored records and the
// terminal can all share one set of rules.
//
// Two kinds of bound are offered because they answer different questions.
// Bytes bound what is stored or sent to a model, where size is what costs;
// display cells bound what is shown in a terminal, where a wide character
// takes two columns. ClipRunes serves the few bounds that were promised in
// characters. Every cut falls between characters, never inside a UTF-8
// sequence, so the result is valid UTF-8 whenever the input was.
package text

import (
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Ellipsis marks where Clip and ClipWidth cut.
const Ellipsis = "…"

// Head returns the longest prefix of s that has at most n bytes and does
// not end inside a UTF-8 sequence, including one that s itself ends in the
// middle of. Bytes that are not valid UTF-8 are treated as one-byte
// characters, so they are cut like ASCII.
func Head(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	return s[:cutBefore(s, n)]
}

// Tail returns the longest suffix of s that has at most n bytes and does
// not start inside a UTF-8 sequence.
func Tail(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	return s[cutAfter(s, len(s)-n):]
}

// Clip keeps at most n bytes of s, cut as Head cuts, and appends Ellipsis
// when anything was dropped. The mark is extra: the result can be up to
// len(Ellipsis) bytes longer than n.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Head(s, n) + Ellipsis
}

// ClipRunes keeps the first n characters of s and appends mark when
// anything was dropped. It is for bounds that were promised in characters
// rather than bytes, such as a line length a tool documents.
func ClipRunes(s string, n int, mark string) string {
	n = max(n, 0)
	k := 0
	for i := range s {
		if k == n {
			return s[:i] + mark
		}
		k++
	}
	return s
}

// ClipMiddle keeps the first n/2 and the last n-n/2 bytes of s, each cut as
// Head and Tail cut, and puts mark(omitted) between them, where omitted is
// the number of bytes dropped. The head and tail are what matter for
// command output and logs: the start shows what ran and the end shows how
// it finished. As with Clip, the mark is extra.
func ClipMiddle(s string, n int, mark func(omitted int) string) string {
	if len(s) <= n {
		return s
	}
	head, tail := Head(s, n/2), Tail(s, n-n/2)
	return head + mark(len(s)-len(head)-len(tail)) + tail
}

// ClipWidth cuts s to at most n terminal cells, Ellipsis included, so a
// line fits the screen however wide its characters are. Control characters
// count as zero cells, so callers flatten line breaks first. A bound below
// one cell gives the empty string.
//
// A long s is measured only as far as the cut: the width of a whole task
// prompt (a few kilobytes, segmented into graphemes) was a tenth of a
// long run's CPU, spent on the one line that names a child's task. A
// grapheme is at most two cells wide, and the graphemes of a prefix are
// those of s but for its last, so a prefix more than n+2 cells wide
// holds every grapheme the cut keeps, and clipping it gives what
// clipping s does.
func ClipWidth(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if k := 4 * (n + 3); len(s) > k {
		if p := s[:cutBefore(s, k)]; runewidth.StringWidth(p) > n+2 {
			return runewidth.Truncate(p, n, Ellipsis)
		}
	}
	if runewidth.StringWidth(s) <= n {
		return s
	}
	return runewidth.Truncate(s, n, Ellipsis)
}

// cutBefore moves the cut at byte i (0 < i < len(s)) back to the start of
// the character that straddles it, if one does.
func cutBefore(s string, i int) int {
	if start := runeStart(s, i); start < i {
		return start
	}
	return i
}

// cutAfter moves the cut at byte i (0 < i < len(s)) forward past the
// character that straddles it, if one does.
func cutAfter(s string, i int) int {
	start := runeStart(s, i)
	if start == i {
		return i
	}
	if !utf8.FullRuneInString(s[start:]) {
		return len(s) // the character is cut short by the end of s as well
	}
	_, size := utf8.DecodeRuneInString(s[start:])
	return start + size
}

// runeStart returns where the UTF-8 sequence containing byte i begins, or
// i if byte i starts a character or belongs to no valid sequence. A
// sequence that the end of s cuts short counts as a character, so a cut
// in a buffer read up to a byte limit still falls before it. Looking back
// at most utf8.UTFMax-1 bytes keeps a run of stray continuation bytes from
// moving a cut arbitrarily far.
func runeStart(s string, i int) int {
	for j := i; j >= 0 && j > i-utf8.UTFMax; j-- {
		if !utf8.RuneStart(s[j]) {
			continue
		}
		if j < i {
			if !utf8.FullRuneInString(s[j:]) {
				return j
			}
			if r, size := utf8.DecodeRuneInString(s[j:]); (r != utf8.RuneError || size > 1) && j+size > i {
				return j
			}
		}
		return i
	}
	return i
}
