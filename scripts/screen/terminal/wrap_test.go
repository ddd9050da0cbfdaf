package terminal

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestWrap is the table of what the one wrapping function must get right:
// no break inside a word or a hyphenated word, escape sequences kept whole
// and not counted, wide characters counted as two cells.
func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		width int
		want  string
	}{
		{"fits", "short line", 20, "short line"},
		{"at spaces", "one two three four five", 10, "one two\nthree four\nfive"},
		{"no mid-word break", "set your OPENAI_API_KEY in the environment", 20, "set your\nOPENAI_API_KEY in\nthe environment"},
		{"hyphenated word moves whole", "keep the tree up-to-date with main", 20, "keep the tree\nup-to-date with main"},
		{"help's Ctrl-D", "At an idle prompt Ctrl-C clears the line; Ctrl-C twice or Ctrl-D leaves.", 20,
			"At an idle prompt\nCtrl-C clears the\nline; Ctrl-C twice\nor Ctrl-D leaves."},
		{"Ctrl-D at the edge", "press Ctrl-D", 10, "press\nCtrl-D"},
		{"an option stays whole", "run `ls -la`? now", 8, "run `ls\n-la`?\nnow"},
		{"a dash between words is not glued", "this - that", 6, "this -\nthat"},
		{"escape sequences are not counted or cut", "\x1b[1mbold words\x1b[0m here and there", 15, "\x1b[1mbold words\x1b[0m here\nand there"},
		{"wide characters count two", "漢字漢字 漢字漢字 漢字", 10, "漢字漢字\n漢字漢字\n漢字"},
		{"kept line breaks", "a b\nc d e f", 3, "a b\nc d\ne f"},
		{"a word wider than the line is cut", "see https://example.com/abcdefghij", 12, "see\nhttps://exam\nple.com/abcd\nefghij"},
		{"own non-breaking hyphen kept", "a\u2011b c", 3, "a\u2011b\nc"},
		{"no width", "anything at all", 0, "anything at all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Wrap(tc.in, tc.width)
			if got != tc.want {
				t.Fatalf("Wrap(%q, %d) =\n%q\nwant\n%q", tc.in, tc.width, got, tc.want)
			}
			if tc.width > 0 {
				for _, l := range strings.Split(got, "\n") {
					if w := ansi.StringWidth(l); w > tc.width {
						t.Errorf("line %q is %d cells, wider than %d", l, w, tc.width)
					}
				}
			}
		})
	}
}

func BenchmarkWrap(b *testing.B) {
	para := strings.Repeat("a paragraph of up-to-date prose with Ctrl-D in it, ", 40)
	for b.Loop() {
		_ = Wrap(para, 80)
	}
}

// Help lines laid out in columns wrap under their text's column, never
// past the width and never inside a word.
func TestWrapHanging(t *testing.T) {
	in := "  -m, --model string   the model to use for the main agent and its children, unless a task says otherwise\n" +
		"  analyze     Duration, turns, tokens, cost, tool use, errors and success rate of a session\n" +
		"The model is configured by OPENAI_API_KEY, OPENAI_BASE_URL and RALPH_MODEL, the flags below.\n" +
		"short line"
	got := WrapHanging(in, 60)
	want := "  -m, --model string   the model to use for the main agent\n" +
		"                       and its children, unless a task says\n" +
		"                       otherwise\n" +
		"  analyze     Duration, turns, tokens, cost, tool use,\n" +
		"              errors and success rate of a session\n" +
		"The model is configured by OPENAI_API_KEY, OPENAI_BASE_URL\n" +
		"and RALPH_MODEL, the flags below.\n" +
		"short line"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if WrapHanging(in, 0) != in {
		t.Fatal("width 0 changed the text")
	}
}
