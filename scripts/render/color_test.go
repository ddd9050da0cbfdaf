package render

import (
	"regexp"
	"strings"
	"testing"
)

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// layoutDoc uses every construct whose colour rendering keeps the plain
// layout. Strikethrough is left out on purpose: plain mode spells it
// "~~x~~" because without colour the markers are the only way to show it.
const layoutDoc = "# Title of the answer\n\n" +
	"Some *italic* and **bold** prose with `inline code` that runs on long enough to wrap a few times at narrow widths, plus a [link](https://example.com/page) and https://bare.example.com/a_b_c.\n\n" +
	"## Lists\n\n" +
	"- first item with enough words to wrap under its own text\n" +
	"- [x] a finished task\n" +
	"- [ ] an open task\n" +
	"  1. nested ordered item\n" +
	"  2. another one\n\n" +
	"8. eight\n9. nine\n10. ten\n\n" +
	"> A quotation that is also long enough to wrap inside its gutter.\n\n" +
	"```sh\ngo test -race ./render/\n```\n\n" +
	"| Column | Value | Description |\n|:--|--:|:-:|\n| `a` | 1 | a cell long enough that narrow tables must wrap it |\n\n" +
	"---\n\n" +
	"中文文本测试：这是一个很长的句子，用于测试宽字符的换行是否正确。\n\n" +
	"<div>html</div>\n\n#### Deep heading\n"

// normalise maps the deliberate differences between the modes onto each
// other: colour mode pads inline code with background-coloured spaces
// where plain mode has backticks, and uses "•" where plain mode has "-".
func normalise(s string) string {
	s = strings.NewReplacer("`", " ", "•", "-").Replace(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func TestColorLayoutMatchesPlain(t *testing.T) {
	for _, width := range []int{20, 33, 47, 80, 120} {
		plain := Markdown(layoutDoc, Options{Width: width})
		color := Markdown(layoutDoc, Options{Width: width, Color: true})
		if plain == color {
			t.Fatalf("width %d: colour output has no styling", width)
		}
		if got, want := normalise(stripANSI(color)), normalise(plain); got != want {
			t.Errorf("width %d: stripped colour layout differs from plain\ncolour:\n%s\nplain:\n%s", width, got, want)
		}
	}
	for _, tc := range plainCases {
		// Plain mode spells strikethrough "~~x~~", and quotes code that
		// contains backticks with longer delimiters than colour's padding.
		if strings.Contains(tc.md, "~~") || strings.Contains(tc.name, "backtick") {
			continue
		}
		plain := Markdown(tc.md, Options{Width: tc.width})
		color := Markdown(tc.md, Options{Width: tc.width, Color: true})
		if got, want := normalise(stripANSI(color)), normalise(plain); got != want {
			t.Errorf("%s: stripped colour layout differs from plain\ncolour:\n%s\nplain:\n%s", tc.name, got, want)
		}
	}
}

// TestProseFitsWidth checks every line of wrapped prose (everything but
// code blocks, which are never wrapped) against the width, measuring
// display columns after removing the escapes.
func TestProseFitsWidth(t *testing.T) {
	doc := strings.ReplaceAll(layoutDoc, "```sh\ngo test -race ./render/\n```\n\n", "") +
		"\nSupercalifragilisticexpialidocious-and-then-some-more-characters-to-force-a-split word.\n"
	for width := minWidth; width <= maxWidth; width++ {
		for _, color := range []bool{false, true} {
			out := Markdown(doc, Options{Width: width, Color: color})
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := textWidth(stripANSI(line)); w > width {
					t.Errorf("width %d color %v: line is %d columns: %q", width, color, w, line)
				}
			}
		}
	}
}

func TestNoEscapesWithoutColor(t *testing.T) {
	out := Markdown(layoutDoc+"\n~~struck~~\n", Options{Width: 60})
	if strings.ContainsRune(out, '\x1b') {
		t.Errorf("plain output contains an escape: %q", out)
	}
}

// TestColorSpansReset checks that no line leaves a style switched on,
// so that nothing bleeds into the next line, a prefix, or the prompt.
func TestColorSpansReset(t *testing.T) {
	out := Markdown(layoutDoc+"\n~~struck~~\n", Options{Width: 60, Color: true})
	for _, line := range strings.Split(out, "\n") {
		seqs := ansiRE.FindAllString(line, -1)
		if len(seqs) > 0 && seqs[len(seqs)-1] != sgrReset {
			t.Errorf("line does not end with a reset: %q", line)
		}
		if !strings.HasSuffix(line, sgrReset) && strings.HasSuffix(stripANSI(line), " ") {
			t.Errorf("line has trailing spaces: %q", line)
		}
	}
	if strings.Count(stripANSI(out), "\x1b") != 0 {
		t.Errorf("colour output contains escapes other than SGR: %q", out)
	}
}

func TestColorStyles(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"# h", "\x1b[1;38;5;228;48;5;63mh\x1b[0m\n"},
		{"## h", "\x1b[1;38;5;39mh\x1b[0m\n"},
		{"*i* **b** ~~s~~", "\x1b[3mi\x1b[0m \x1b[1mb\x1b[0m \x1b[9ms\x1b[0m\n"},
		{"`c`", "\x1b[38;5;203;48;5;236m c \x1b[0m\n"},
		{"***x***", "\x1b[1;3mx\x1b[0m\n"},
		{"- a", "\x1b[38;5;244m•\x1b[0m a\n"},
		{"> q", "\x1b[38;5;240m│\x1b[0m \x1b[3;38;5;247mq\x1b[0m\n"},
		{"```go\nx\n```", "  \x1b[38;5;244mgo\x1b[0m\n  \x1b[38;5;180mx\x1b[0m\n"},
	} {
		if got := Markdown(tc.md, Options{Color: true}); got != tc.want {
			t.Errorf("Markdown(%q)\ngot  %q\nwant %q", tc.md, got, tc.want)
		}
	}
}

func TestCJKWidth(t *testing.T) {
	out := Markdown("漢字かなカナ한국어 mixed with English words and more 漢字 text here", Options{Width: 20})
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := textWidth(line); w > 20 {
			t.Errorf("line %q is %d columns wide", line, w)
		}
	}
	if got := textWidth("漢字"); got != 4 {
		t.Errorf("textWidth(漢字) = %d, want 4", got)
	}
}
