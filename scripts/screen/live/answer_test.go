package live

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ralph-dev/ralph/e2e/vt"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

// streamTo streams answer in random pieces through an Answer painted on a
// terminal model of cols×rows, the way a face paints it, and finishes it.
func streamTo(rng *rand.Rand, answer string, color bool, cols, rows int) string {
	term := vt.New(cols, rows)
	a := &Answer{Color: color, Style: func() string { return "notty" }}
	var r Region
	paint := func() {
		_, _ = io.WriteString(term.TTY(), r.Frame(a.Take(), a.Live(), cols, rows))
		a.Shown()
	}
	maxPiece := 1 + rng.IntN(40)
	for rest := answer; rest != ""; {
		n := min(len(rest), 1+rng.IntN(maxPiece))
		a.Write(rest[:n], cols, rows)
		rest = rest[n:]
		if rng.IntN(3) > 0 {
			paint()
		}
	}
	a.Finish(answer, cols, rows)
	paint()
	return term.Text()
}

// The one rule of the live region, for any chunking, paragraph length and
// window height: it is never taller than the window, so what scrolls out
// of it is written once, and the screen and its scrollback hold every word
// of the answer exactly once, in order, rendered or raw.
//
// Each case has a generator of its own, so the cases run side by side;
// -short (make check) runs the first 40 of make test's 150.
func TestLiveRegionWritesEveryWordOnce(t *testing.T) {
	// Each piece renders the block in flight again (renderLive); under the
	// race detector 150 streams took eight minutes on a loaded machine, and
	// 30 still cover every kind of case the generator makes.
	cases := shortOr(40, 150)
	if raceEnabled {
		cases = min(cases, 30)
	}
	for i := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(44, uint64(i)))
			rows := 2 + rng.IntN(199)
			cols := 20 + rng.IntN(100)
			var paragraphs []int
			for range 1 + rng.IntN(4) {
				paragraphs = append(paragraphs, 1+rng.IntN(700))
			}
			answer, n := vt.Numbered(paragraphs...)
			color := i%4 != 0
			what := fmt.Sprintf("case %d: %d×%d, colour %v, paragraphs %v", i, cols, rows, color, paragraphs)
			if screen := streamTo(rng, answer, color, cols, rows); vt.WordsOnce(screen, n) != nil {
				t.Fatalf("%s: %v; screen:\n%s", what, vt.WordsOnce(screen, n), tail(screen))
			}
		})
	}
}

// shortOr is short under -short (make check) and full otherwise (make
// test): how many random cases a property test tries.
func shortOr(short, full int) int {
	if testing.Short() {
		return short
	}
	return full
}

// The case of the issue: 600 words with no newline, slowly, in a 100×20
// window, left tens of thousands of copies in the scrollback.
func TestLongParagraphInASmallWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 100))
	answer, n := vt.Numbered(600)
	for _, rows := range []int{2, 3, 20, 30, 60} {
		if err := vt.WordsOnce(streamTo(rng, answer, true, 100, rows), n); err != nil {
			t.Errorf("100×%d: %v", rows, err)
		}
	}
}

// A terminal that reports no size is laid out as 80×24, and the answer's
// blocks are still rendered.
func TestUnknownSizeIsRendered(t *testing.T) {
	if w, h := Size(0, 0); w != 80 || h != 24 {
		t.Fatalf("Size(0, 0) = %d×%d, want 80×24", w, h)
	}
	a := &Answer{Color: true, Style: func() string { return "dark" }}
	a.Write("# Title\n\nSome **bold** text.\n\n", 0, 0)
	a.Finish("# Title\n\nSome **bold** text.\n", 0, 0)
	out := a.Take()
	if strings.Contains(out, "**bold**") || !strings.Contains(out, "\x1b[") {
		t.Fatalf("the answer was not rendered on a terminal of unknown size:\n%q", out)
	}
}

// Raw rows are exactly the layout of terminal.Wrap, the one wrapping of
// everything ralph prints, within the width less the last column, however
// the text is cut into pieces: hyphenated words kept whole, wide
// characters counted as two cells, indentation kept, a word wider than
// the line cut.
func TestRawRowsAreTheOneWrap(t *testing.T) {
	answer := strings.Join([]string{
		"Set OPENAI_API_KEY before you run it, and keep the cache up-to-date with Ctrl-D and make -j4 all.",
		"    indented code line that is long enough to wrap somewhere in the middle of it",
		"日本語のテキストは二つのセルを使います、そして折り返しも正しく数えられます。",
		"https://example.invalid/a/very/long/path/that/is/wider/than/any/line/we/have/here/at/all",
		"",
		"short",
	}, "\n")
	for _, cols := range []int{20, 33, 80} {
		var want []string
		for _, l := range strings.Split(answer, "\n") {
			want = append(want, terminal.Wrap(l, cols-1))
		}
		rng := rand.New(rand.NewPCG(uint64(cols), 7))
		for range 30 {
			a := &Answer{}
			var out strings.Builder
			for rest := answer; rest != ""; {
				n := min(len(rest), 1+rng.IntN(9))
				for n < len(rest) && !utf8.RuneStart(rest[n]) {
					n++
				}
				a.Write(rest[:n], cols, 200)
				out.WriteString(a.Take())
				rest = rest[n:]
			}
			a.Finish(answer, cols, 200)
			out.WriteString(a.Take())
			if got := strings.TrimSuffix(out.String(), "\n"); got != strings.Join(want, "\n") {
				t.Fatalf("width %d: laid out\n%s\nwant\n%s", cols, got, strings.Join(want, "\n"))
			}
		}
	}
}

func TestSanitize(t *testing.T) {
	if got := Sanitize("a\x1b[31mb\tc\x07\r\n\u0085d\x1b]0;title\x07"); got != "ab    c\nd" {
		t.Fatalf("Sanitize = %q", got)
	}
	if got := Sanitize("plain ünïcode\n"); got != "plain ünïcode\n" {
		t.Fatalf("Sanitize changed clean text: %q", got)
	}
}
