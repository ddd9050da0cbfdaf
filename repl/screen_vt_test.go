package repl

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/e2e/vt"
)

// numberedAnswer is paragraphs of numbered words (w0, w1, …), each
// paragraph one line of the lengths given.
func numberedAnswer(paragraphs []int) (string, int) {
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
			fmt.Fprintf(&b, "w%d", n)
			n++
		}
	}
	return b.String(), n
}

var numberedWord = regexp.MustCompile(`\bw([0-9]+)\b`)

// The chat's screen, on a terminal model, for any chunking, paragraph
// length and window height from 2 to 200 rows: the screen and its
// scrollback hold each word of the answer exactly once, in order. A
// paragraph taller than the window used to be drawn again into the
// scrollback at every piece (39,120 copies of 600 words at 100×20).
func TestScreenWritesEveryWordOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 2))
	cases := []struct {
		cols, rows int
		paragraphs []int
	}{{100, 20, []int{600}}, {100, 30, []int{600}}, {100, 60, []int{600}}, {100, 2, []int{30, 200}}}
	for range 60 {
		var ps []int
		for range 1 + rng.IntN(3) {
			ps = append(ps, 1+rng.IntN(700))
		}
		cases = append(cases, struct {
			cols, rows int
			paragraphs []int
		}{20 + rng.IntN(100), 2 + rng.IntN(199), ps})
	}
	for i, tc := range cases {
		color := i%3 != 2
		term := vt.New(tc.cols, tc.rows)
		out := term.TTY()
		s := &screen{draftOut: out, infoOut: out, color: color, mdStyle: "notty", size: func() (int, int) { return tc.cols, tc.rows }}
		answer, n := numberedAnswer(tc.paragraphs)
		piece := 1 + rng.IntN(30)
		for rest := answer; rest != ""; {
			k := min(len(rest), 1+rng.IntN(piece))
			s.delta(rest[:k])
			rest = rest[k:]
		}
		s.finish(answer)
		screen := term.Text()
		words := numberedWord.FindAllStringSubmatch(screen, -1)
		what := fmt.Sprintf("%d×%d, colour %v, paragraphs %v", tc.cols, tc.rows, color, tc.paragraphs)
		for j, m := range words {
			if k, _ := strconv.Atoi(m[1]); k != j {
				t.Fatalf("%s: word %d on the screen is w%s; want w0…w%d once each, in order (%d words on the screen)", what, j, m[1], n-1, len(words))
			}
		}
		if len(words) != n {
			t.Fatalf("%s: %d words on the screen, want %d", what, len(words), n)
		}
	}
}

// A terminal that reports no size (0×0) still gets the answer rendered,
// laid out at 80 columns.
func TestScreenRendersAtUnknownSize(t *testing.T) {
	term := vt.New(80, 24)
	out := term.TTY()
	s := &screen{draftOut: out, infoOut: out, color: true, mdStyle: "dark", size: func() (int, int) { return 0, 0 }}
	answer := "# Plan\n\nIt returns **Vec<u8>** here.\n"
	stream(s, answer, 3)
	s.finish(answer)
	if got := term.Text(); strings.Contains(got, "**") || !strings.Contains(got, "Vec<u8>") {
		t.Fatalf("the answer is not rendered whole:\n%s", got)
	}
}
