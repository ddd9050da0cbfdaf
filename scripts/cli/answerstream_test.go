package cli

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ralph-dev/ralph/e2e/vt"
)

// streamAnswer streams answer in random whole-character pieces (they
// arrive as JSON strings) to a one-shot's answer on a terminal model.
func streamAnswer(rng *rand.Rand, a *answerStream, answer string) {
	for rest := answer; rest != ""; {
		n := min(len(rest), 1+rng.IntN(9))
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++
		}
		a.delta(rest[:n])
		rest = rest[n:]
	}
}

// Without colour the answer is the model's text as it is, written as it
// comes, whatever the pieces (NO_COLOR), and not written again at the end.
func TestAnswerStreamPlainIsTheText(t *testing.T) {
	answer := "Here is\tthe program:\n\n```go\nfunc main() {}\n```\n\nA long line " + strings.Repeat("that goes on ", 20) + "and ends."
	rng := rand.New(rand.NewPCG(3, 7))
	for range 20 {
		var out strings.Builder
		a := &answerStream{out: &out, size: fixedSize(40, 10)}
		streamAnswer(rng, a, answer)
		if a.replace(answer) {
			t.Fatalf("the plain answer would be written twice")
		}
		if out.String() != answer+"\n" {
			t.Fatalf("wrote %q, want the answer as it is", out.String())
		}
	}
}

// In colour the one-shot follows the live region's one rule too: whatever
// the window's height and the paragraphs' length, the screen and its
// scrollback hold each word once, in order, and the answer's last message
// is not written again at the end.
//
// Each case has a generator of its own, so the cases run side by side;
// -short (make check) runs the first 16 of make test's 60.
func TestAnswerStreamWritesEveryWordOnce(t *testing.T) {
	cases := 60
	if testing.Short() {
		cases = 16
	}
	for i := range cases {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(44, uint64(i)))
			cols, rows := 20+rng.IntN(100), 2+rng.IntN(199)
			var ps []int
			for range 1 + rng.IntN(3) {
				ps = append(ps, 1+rng.IntN(600))
			}
			answer, n := vt.Numbered(ps...)
			term := vt.New(cols, rows)
			style := []string{"notty", "dark"}[i%2]
			a := &answerStream{out: term.TTY(), size: fixedSize(cols, rows), color: true, style: func() string { return style }}
			streamAnswer(rng, a, answer)
			if a.replace(answer) {
				t.Fatalf("case %d: the final answer would be written again", i)
			}
			if err := vt.WordsOnce(term.Text(), n); err != nil {
				t.Fatalf("case %d (%d×%d): %v", i, cols, rows, err)
			}
		})
	}
}

// A terminal that reports no size (0×0) is laid out as 80×24 and still
// gets the answer rendered; it used to keep the raw stream.
func TestAnswerStreamRendersAtUnknownSize(t *testing.T) {
	term := vt.New(80, 24)
	a := &answerStream{out: term.TTY(), color: true, style: func() string { return "dark" }}
	answer := "# Plan\n\nSome **bold** words.\n"
	streamAnswer(rand.New(rand.NewPCG(1, 2)), a, answer)
	if a.replace(answer) {
		t.Fatalf("the answer shown would be written again")
	}
	if got := term.Text(); strings.Contains(got, "**") || !strings.Contains(got, "bold words.") {
		t.Fatalf("the answer is not rendered:\n%s", got)
	}
}

// A final answer other than the last message streamed is written whole.
func TestAnswerStreamOtherFinalIsWritten(t *testing.T) {
	term := vt.New(80, 24)
	a := &answerStream{out: term.TTY(), size: fixedSize(80, 24)}
	a.delta("first message")
	a.end()
	if !a.replace("a different answer") {
		t.Fatalf("a different final answer must be written")
	}
}

// fixedSize is a terminal's size that never changes.
func fixedSize(cols, rows int) func() (int, int) {
	return func() (int, int) { return cols, rows }
}
