package terminal

import (
	"strings"
	"unicode"
)

// KeyQuestion is a question one key answers: an approval's y, n, t, a, p,
// the plan's a, r, e, d, a yes or no. Every face asks its questions
// through it, so they all answer a key the same way: an offered key
// answers at once, without Enter; any other character is answered at
// once with Hint, and the question goes on waiting; a face never turns
// the question into a line to edit. An answer of words (the reason after
// t, a revision) is a question of its own, asked on its own line.
type KeyQuestion struct {
	// Keys are the keys that answer, in the order the hint names them.
	Keys string
	// Default, when set, is the answer Enter gives ("n" for "[y/N]");
	// without it Enter answers nothing.
	Default string
}

// Press is what a key press does to a KeyQuestion.
type Press int

const (
	// PressOther is a key the question leaves to the face: a control key
	// such as Ctrl-C or Ctrl-D, or the start of an escape sequence.
	PressOther Press = iota
	// PressAnswer answers the question.
	PressAnswer
	// PressUnoffered is a character the question does not take: the face
	// shows Hint at once and drops the key.
	PressUnoffered
	// PressIgnored is Enter on a question without a default: dropped
	// without a word, since it is what people type after a key out of
	// habit.
	PressIgnored
)

// Press reads one key: what it does, and the answer (lower case) when it
// answers.
func (q KeyQuestion) Press(r rune) (Press, string) {
	if r == '\r' || r == '\n' {
		if q.Default != "" {
			return PressAnswer, q.Default
		}
		return PressIgnored, ""
	}
	if !unicode.IsPrint(r) {
		return PressOther, ""
	}
	k := unicode.ToLower(r)
	if strings.ContainsRune(q.Keys, k) {
		return PressAnswer, string(k)
	}
	return PressUnoffered, ""
}

// Hint names the keys that answer: "press y, n or t".
func (q KeyQuestion) Hint() string {
	keys := strings.Split(q.Keys, "")
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return "press " + keys[0]
	}
	return "press " + strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}
