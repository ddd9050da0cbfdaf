package vt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Numbered is an answer whose every word is unique, so that a screen can
// be checked to hold each exactly once: paragraphs of numbered words (w0,
// w1, …), each one line of as many words as given, separated by blank
// lines. It returns the text and the number of words.
func Numbered(paragraphs ...int) (string, int) {
	var b strings.Builder
	n := 0
	for i, words := range paragraphs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		for j := range words {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("w" + strconv.Itoa(n))
			n++
		}
	}
	return b.String(), n
}

var numberedWord = regexp.MustCompile(`\bw([0-9]+)\b`)

// WordsOnce reports how screen fails to hold the words of Numbered, w0 …
// w(n-1), once each and in order; nil when it does.
func WordsOnce(screen string, n int) error {
	words := numberedWord.FindAllStringSubmatch(screen, -1)
	for i, m := range words {
		if k, _ := strconv.Atoi(m[1]); k != i {
			return fmt.Errorf("word %d on the screen is w%s, want w0…w%d once each, in order (%d words on the screen)", i, m[1], n-1, len(words))
		}
	}
	if len(words) != n {
		return fmt.Errorf("%d words on the screen, want %d", len(words), n)
	}
	return nil
}
