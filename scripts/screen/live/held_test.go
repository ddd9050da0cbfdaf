package live

import (
	"io"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/scripts/screen/live/livetest"

	"github.com/ralph-dev/ralph/e2e/vt"
)

// wordByWord streams answer a word at a time (each piece a word and the
// space or newline after it), as a model does, painting after each.
func wordByWord(answer string, cols, rows int) (screen string, held bool) {
	term := vt.New(cols, rows)
	a := &Answer{Color: true, Style: func() string { return "dark" }}
	var r Region
	paint := func() {
		_, _ = io.WriteString(term.TTY(), r.Frame(a.Take(), a.Live(), cols, rows))
		a.Shown()
		for _, l := range a.Live() {
			held = held || strings.Contains(l, HeldStatus)
		}
	}
	for rest := answer; rest != ""; {
		n := strings.IndexAny(rest, " \n") + 1
		if n == 0 {
			n = len(rest)
		}
		// A fence comes in two pieces, as a tokenizer sends it.
		if strings.HasPrefix(rest, "```") {
			n = 2
		}
		a.Write(rest[:n], cols, rows)
		rest = rest[n:]
		paint()
	}
	a.Finish(answer, cols, rows)
	paint()
	return term.Text(), held
}

// Every block is rendered whatever its height (issue 68): the screen and
// its scrollback hold no raw markdown of an answer whose blocks are
// taller or wider than the window, streamed word by word, and a held
// block said so in the live region meanwhile.
func TestTallBlocksAreRendered(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		cols, rows := size[0], size[1]
		screen, held := wordByWord(livetest.TallAnswer(cols), cols, rows)
		for _, raw := range []string{"```", "> a quote", "- [ ]", "|---|", "**three**"} {
			if strings.Contains(screen, raw) {
				t.Errorf("%d×%d: the raw %q is on the screen:\n%s", cols, rows, raw, tail(screen))
			}
		}
		for _, want := range []string{"x0 := step(0)", "x59 := step(59)", "wide39", "row7", "a quote here", "[ ] a task", "The end."} {
			if strings.Count(screen, want) != 1 {
				t.Errorf("%d×%d: %q is on the screen %d times, want once:\n%s", cols, rows, want, strings.Count(screen, want), tail(screen))
			}
		}
		if !held {
			t.Errorf("%d×%d: no %q while a tall block streamed", cols, rows, HeldStatus)
		}
		if strings.Contains(screen, HeldStatus) {
			t.Errorf("%d×%d: the status row stayed:\n%s", cols, rows, tail(screen))
		}
	}
}

// Output below a block in flight (Freeze) cuts it in two rendered
// blocks: a code block goes on with its fence, a table with its header.
func TestFreezeRendersBothHalves(t *testing.T) {
	for _, tc := range []struct{ first, second, gone string }{
		{"```go\nx := 1\n", "y := 2\n```\n\nafter\n", "```"},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n", "| 3 | 4 |\n\nafter\n", "|---|"},
	} {
		a := &Answer{Color: true, Style: func() string { return "notty" }}
		a.Write(tc.first, 80, 24)
		a.Freeze(80)
		a.Write(tc.second, 80, 24)
		a.Finish(tc.first+tc.second, 80, 24)
		out := a.Take()
		if strings.Contains(out, tc.gone) || !strings.Contains(out, "after") {
			t.Errorf("%q then %q: laid out\n%s", tc.first, tc.second, out)
		}
	}
}
