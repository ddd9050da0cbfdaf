package repl

import (
	"strings"
	"time"
	"unicode"

	"github.com/chzyer/readline"

	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// A question that a single key answers (an approval: y, n, t, a, p) is
// answered as soon as the key is typed on an empty line: the key goes
// into the line and an Enter is injected after it. Any other character
// is answered at once with the keys the question takes, and kept out of
// the line (terminal.KeyQuestion, which the one-shot's questions follow
// too). A person used to
// typing the whole word and Enter ("yes⏎") must not have the rest of it
// land at the next prompt as a message, so what follows the key within a
// moment is dropped while it spells the rest of the word, and so is the
// Enter after it.

// keyWords are the words a key stands for, whose rest is dropped. t has
// none: the person's reason follows it at once, and must come whole.
var keyWords = map[rune]string{'y': "yes", 'n': "no", 'a': "always", 'p': "project"}

// keyGrace is how long after a key's answer the rest of its word is
// dropped.
const keyGrace = 1500 * time.Millisecond

// keyState is the state of single-key answers; only filterRune, on
// readline's key goroutine, uses it.
type keyState struct {
	// entering: an Enter was injected after a key and has not come
	// through yet.
	entering bool
	// rest is what is left of the key's word to drop, until the deadline;
	// dropEnter drops an Enter typed after it too.
	rest      []rune
	dropEnter bool
	until     time.Time
	// hinted is when an unoffered key was last answered with the hint.
	hinted time.Time
}

// hintQuiet is how long after a hint further unoffered keys are dropped
// without another.
const hintQuiet = time.Second

// keyAnswer sees each key before readline and reports whether to drop it.
func (s *Shell) keyAnswer(r rune) bool {
	k := &s.keys
	enter := r == readline.CharEnter || r == readline.CharCtrlJ
	if k.entering && enter {
		// The injected Enter: from now on, drop the rest of the word.
		k.entering = false
		k.dropEnter = true
		k.until = time.Now().Add(keyGrace)
		return false
	}
	if k.dropEnter || len(k.rest) > 0 {
		if time.Now().Before(k.until) {
			if len(k.rest) > 0 && unicode.ToLower(r) == k.rest[0] {
				k.rest = k.rest[1:]
				return true
			}
			if enter && k.dropEnter {
				k.rest, k.dropEnter = nil, false
				return true
			}
		}
		k.rest, k.dropEnter = nil, false
	}
	s.mu.Lock()
	req := s.ask
	s.mu.Unlock()
	if req == nil || req.keys == "" || s.lineLen.Load() != 0 {
		return false
	}
	q := terminal.KeyQuestion{Keys: req.keys}
	press, answer := q.Press(r)
	switch press {
	case terminal.PressUnoffered:
		// Answered at once, and the key is not put into the line: a
		// line would turn the one-key question into one waiting for
		// Enter. A burst of such keys (a paste) gets one hint.
		if now := time.Now(); now.After(k.hinted.Add(hintQuiet)) {
			k.hinted = now
			s.note(q.Hint(), false)
		}
		return true
	case terminal.PressIgnored:
		return true
	case terminal.PressAnswer:
		k.entering = true
		k.rest = []rune(strings.TrimPrefix(keyWords[unicode.ToLower(r)], answer))
		s.in.Inject([]byte{readline.CharEnter})
	}
	return false
}
