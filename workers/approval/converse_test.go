package approval

import (
	"context"
	"strings"
	"testing"
)

// scriptedPrompter answers from a script and records what it was asked.
type scriptedPrompter struct {
	answers []string
	asked   []string // "key: question" or "line: question"
	keys    []string
	firsts  []bool
}

func (s *scriptedPrompter) next() string {
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a
}

func (s *scriptedPrompter) AskKey(_ context.Context, question, _, keys string, first bool) (string, error) {
	s.asked, s.keys, s.firsts = append(s.asked, "key: "+question), append(s.keys, keys), append(s.firsts, first)
	return s.next(), nil
}

func (s *scriptedPrompter) AskLine(_ context.Context, question, _ string) (string, error) {
	s.asked = append(s.asked, "line: "+question)
	return s.next(), nil
}

// Converse shows Help on ?, asks again after an answer it does not take,
// and asks for the reason after t on a line of its own.
func TestConverse(t *testing.T) {
	q := Question{Command: "make", Remember: []string{"make"}}
	p := &scriptedPrompter{answers: []string{"?", "maybe", "t", "use the script"}}
	ans, err := Converse(context.Background(), p, q)
	if err != nil || ans != NoBecause("use the script") {
		t.Fatalf("Converse = %v, %v", ans, err)
	}
	if len(p.asked) != 4 || !strings.Contains(p.asked[1], "From then on a command runs without asking") ||
		!strings.Contains(p.asked[2], "please answer") || p.asked[3] != "line: what should ralph be told?" {
		t.Fatalf("asked %q", p.asked)
	}
	if p.keys[0] != "yntap?" || !p.firsts[0] || p.firsts[1] {
		t.Fatalf("keys %q, first %v", p.keys, p.firsts)
	}
	never := Question{Command: "ls > /x", Why: []string{"x"}}
	p = &scriptedPrompter{answers: []string{"y"}}
	if ans, err := Converse(context.Background(), p, never); err != nil || ans != Yes || p.keys[0] != "ynt" {
		t.Fatalf("Converse = %v, %v; keys %q", ans, err, p.keys)
	}
}
