package render

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/util"
)

// decode resolves backslash escapes and character references the way an
// HTML renderer would, since the terminal shows the text itself. Code
// points that are not safe to print become U+FFFD.
func decode(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 {
		return string(v)
	}
	var b []byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]) {
			b = append(b, v[i+1])
			i++
			continue
		}
		if c == '&' {
			if s, n, ok := reference(v[i:]); ok {
				b = append(b, s...)
				i += n - 1
				continue
			}
		}
		b = append(b, c)
	}
	return string(b)
}

// reference decodes the character reference at the start of v, returning
// its text and the number of bytes it spans.
func reference(v []byte) (string, int, bool) {
	end := bytes.IndexByte(v, ';')
	if end < 2 || end > 40 {
		return "", 0, false
	}
	name := string(v[1:end])
	if name[0] != '#' {
		if e, ok := util.LookUpHTML5EntityByName(name); ok {
			return string(e.Characters), end + 1, true
		}
		return "", 0, false
	}
	num, base := name[1:], 10
	if num != "" && (num[0] == 'x' || num[0] == 'X') {
		num, base = num[1:], 16
	}
	if num == "" || len(num) > 7 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(num, base, 32)
	if err != nil {
		return "", 0, false
	}
	ru := rune(n)
	if !utf8.ValidRune(ru) || unsafeRune(ru) {
		ru = utf8.RuneError
	}
	return string(ru), end + 1, true
}

// unsafeRune reports control characters: printed raw they could move the
// cursor or start an escape sequence in the user's terminal.
func unsafeRune(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r <= 0x9f
}

// cjkWord splits a word at the places where Chinese and Japanese text may
// break between characters, since those languages put no spaces between
// words. The breaks are zero-width space pieces.
func cjkWord(w string, st style, ps []piece) []piece {
	start, prev := 0, rune(-1)
	for i, c := range w {
		if prev >= 0 && canBreak(prev, c) {
			ps = append(ps, piece{text: w[start:i], w: textWidth(w[start:i]), st: st},
				piece{st: st, space: true})
			start = i
		}
		prev = c
	}
	return append(ps, piece{text: w[start:], w: textWidth(w[start:]), st: st})
}

// canBreak approximates the Unicode line breaking rules for ideographs:
// a break is allowed next to a CJK character, except before closing and
// after opening punctuation, and never next to a zero-width rune such as
// a combining mark or a joiner.
func canBreak(a, b rune) bool {
	if !isCJK(a) && !isCJK(b) {
		return false
	}
	if widthCond.RuneWidth(a) == 0 || widthCond.RuneWidth(b) == 0 {
		return false
	}
	return !strings.ContainsRune(noBreakBefore, b) && !strings.ContainsRune(noBreakAfter, a)
}

const (
	noBreakBefore = "、。，．：；？！）」』】〕〉》〗〙〛”’・ー…‥ゝゞ々ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ,.:;!?)]}%"
	noBreakAfter  = "（「『【〔〈《〖〘〚“‘([{$#"
)

func isCJK(r rune) bool {
	return r >= 0x3000 && r <= 0x303f || r >= 0xff00 && r <= 0xffef ||
		unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
