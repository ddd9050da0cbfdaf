package repl

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/e2e/vt"
)

// The chat's screen, on a terminal model, for any chunking, paragraph
// length and window height from 2 to 200 rows: the screen and its
// scrollback hold each word of the answer exactly once, in order. A
// paragraph taller than the window used to be drawn again into the
// scrollback at every piece (39,120 copies of 600 words at 100×20).
//
// Each random case has a generator of its own, so the cases run side by
// side; -short (make check) runs the first 16 of make test's 60.
func TestScreenWritesEveryWordOnce(t *testing.T) {
	type screenCase struct {
		cols, rows int
		paragraphs []int
	}
	cases := []screenCase{{100, 20, []int{600}}, {100, 30, []int{600}}, {100, 60, []int{600}}, {100, 2, []int{30, 200}}}
	random := 60
	if testing.Short() {
		random = 16
	}
	for i := range random {
		rng := rand.New(rand.NewPCG(44, uint64(i)))
		var ps []int
		for range 1 + rng.IntN(3) {
			ps = append(ps, 1+rng.IntN(700))
		}
		cases = append(cases, screenCase{20 + rng.IntN(100), 2 + rng.IntN(199), ps})
	}
	for i, tc := range cases {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(45, uint64(i)))
			color := i%3 != 2
			term := vt.New(tc.cols, tc.rows)
			out := term.TTY()
			s := &screen{draftOut: out, infoOut: out, color: color, mdStyle: "notty", size: func() (int, int) { return tc.cols, tc.rows }}
			answer, n := vt.Numbered(tc.paragraphs...)
			piece := 1 + rng.IntN(30)
			for rest := answer; rest != ""; {
				k := min(len(rest), 1+rng.IntN(piece))
				s.delta(rest[:k])
				rest = rest[k:]
			}
			s.finish(answer)
			if err := vt.WordsOnce(term.Text(), n); err != nil {
				t.Fatalf("%d×%d, colour %v, paragraphs %v: %v", tc.cols, tc.rows, color, tc.paragraphs, err)
			}
		})
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

// A block that ends while the live region still shows it, and a resize
// (narrower and lower) before the next paint: the rows shown stay on the
// screen for good (fitLocked), so the block must not be written again
// under them. Laid out as each piece came, the block was queued whole
// before the paint saw the resize, and the suite's resize test found it
// printed twice, now and then, on a loaded machine.
func TestScreenResizeBeforePaintWritesABlockOnce(t *testing.T) {
	term := vt.New(100, 30)
	out := term.TTY()
	cols, rows := 100, 30
	s := &screen{draftOut: out, infoOut: out, color: true, mdStyle: "notty", size: func() (int, int) { return cols, rows }}
	head := "## Part 1\n\nThe part 1 explains a function.\n\n```go\n"
	for j := range 6 {
		head += "func part1Line" + string(rune('0'+j)) + "() int { return 1 }\n"
	}
	tail := "```\n\nThe end.\n"
	stream(s, head, 7)
	if !strings.Contains(term.Text(), "part1Line5") {
		t.Fatalf("the live region does not show the block in flight:\n%s", term.Text())
	}
	// A painter that has not run yet: changes only wake it.
	s.kick = make(chan struct{}, 1)
	s.delta(tail)
	cols, rows = 60, 15
	s.paint()
	s.kick = nil
	s.finish(head + tail)
	got := term.Text()
	for j := range 6 {
		if n := strings.Count(got, "part1Line"+string(rune('0'+j))); n != 1 {
			t.Fatalf("part1Line%d is there %d times, want once:\n%s", j, n, got)
		}
	}
	if !strings.Contains(got, "The end.") || strings.Contains(got, "```") {
		t.Fatalf("the answer's end is missing or raw:\n%s", got)
	}
}
