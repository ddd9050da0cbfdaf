package scripts

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ralph-dev/ralph/scripts/terminal"
)

// The streamed answer is wrapped at words within the width, and the rows
// it took are counted exactly, whatever the chunks.
func TestAnswerStreamWraps(t *testing.T) {
	var out bytes.Buffer
	a := &answerStream{out: &out, width: 10}
	for _, chunk := range []string{"hello wo", "rld, this is", " a longwordthatgoesonandon\nend"} {
		a.delta(chunk)
	}
	a.end()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, l := range lines {
		if len(l) > 10 {
			t.Errorf("line %q is wider than 10", l)
		}
	}
	if a.lastRows != len(lines) {
		t.Fatalf("counted %d rows, wrote %d:\n%s", a.lastRows, len(lines), out.String())
	}
	if !strings.HasPrefix(out.String(), "hello\nworld,\nthis is a\n") {
		t.Fatalf("not wrapped at words:\n%q", out.String())
	}
}

// However the answer is cut into pieces, what streams is exactly the
// layout of terminal.Wrap, the one wrapping of everything ralph prints:
// hyphenated words kept whole, wide characters counted as two cells,
// indentation kept, a word wider than the line cut.
func TestAnswerStreamIsTheOneWrap(t *testing.T) {
	answer := strings.Join([]string{
		"Set OPENAI_API_KEY before you run it, and keep the cache up-to-date with Ctrl-D and make -j4 all.",
		"    indented code line that is long enough to wrap somewhere in the middle of it",
		"日本語のテキストは二つのセルを使います、そして折り返しも正しく数えられます。",
		"https://example.invalid/a/very/long/path/that/is/wider/than/any/line/we/have/here/at/all",
		"",
		"short",
	}, "\n")
	for _, width := range []int{12, 20, 33, 80} {
		var want []string
		for _, l := range strings.Split(answer, "\n") {
			want = append(want, terminal.Wrap(l, width))
		}
		rng := rand.New(rand.NewPCG(uint64(width), 7))
		for range 50 {
			var out bytes.Buffer
			a := &answerStream{out: &out, width: width}
			for rest := answer; rest != ""; {
				// Pieces arrive as JSON strings: whole characters.
				n := min(len(rest), 1+rng.IntN(9))
				for !utf8.RuneStart(rest[n%len(rest)]) && n < len(rest) {
					n++
				}
				a.delta(rest[:n])
				rest = rest[n:]
			}
			a.end()
			got := strings.TrimSuffix(out.String(), "\n")
			if got != strings.Join(want, "\n") {
				t.Fatalf("width %d: streamed\n%s\nwant\n%s", width, got, strings.Join(want, "\n"))
			}
			if rows := strings.Count(out.String(), "\n"); a.lastRows != rows {
				t.Fatalf("width %d: counted %d rows, wrote %d", width, a.lastRows, rows)
			}
		}
	}
}

// The streamed answer is replaced by its rendering only while all of it
// is still on the screen: a taller one stays as it streamed, since moving
// up past the top would erase lines that are not the answer's.
func TestAnswerStreamReplacesOnlyWhatIsOnScreen(t *testing.T) {
	for _, c := range []struct {
		lines, height int
		replaced      bool
	}{
		{lines: 5, height: 24, replaced: true},
		{lines: 23, height: 24, replaced: true},
		{lines: 24, height: 24, replaced: false},
		{lines: 30, height: 40, replaced: true},
		{lines: 5, height: 0, replaced: false},
	} {
		var out bytes.Buffer
		a := &answerStream{out: &out, width: 80, height: c.height}
		answer := strings.Repeat("a line\n", c.lines)
		a.delta(answer)
		out.Reset()
		needed := a.replace(answer)
		erased := strings.Contains(out.String(), "\x1b[J")
		if erased != c.replaced || needed != c.replaced {
			t.Errorf("%d lines on %d rows: erased %v, needs writing %v; want %v", c.lines, c.height, erased, needed, c.replaced)
		}
	}
}
