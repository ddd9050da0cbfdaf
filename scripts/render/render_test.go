package render

import (
	"runtime"
	"strings"
	"testing"
)

// plainCases pin the plain-mode layout of every construct. Plain mode is
// also the layout colour mode must reproduce once its escapes are removed
// (see TestColorLayoutMatchesPlain), so these expectations cover both.
var plainCases = []struct {
	name  string
	md    string
	width int
	want  string
}{
	{"empty", "", 40, "\n"},
	{"headings", "# One\n\n## Two\n\n### Three\n\n#### Four\n\nSetext\n======\n", 40,
		"One\n\nTwo\n\nThree\n\n#### Four\n\nSetext\n"},
	{"heading wraps", "## A heading that is much too long for the line\n", 20,
		"A heading that is\nmuch too long for\nthe line\n"},
	{"paragraph wrap", "The quick brown fox jumps over the lazy dog and keeps\nrunning far away.\n", 20,
		"The quick brown fox\njumps over the lazy\ndog and keeps\nrunning far away.\n"},
	{"paragraphs", "One.\n\n\n\nTwo.\n", 40, "One.\n\nTwo.\n"},
	{"emphasis", "Some *italic*, **bold**, ***both*** and _under_.\n", 60,
		"Some italic, bold, both and under.\n"},
	{"strikethrough", "Was ~~wrong~~ right, ~5 ms or ~10 ms.\n", 60,
		"Was ~~wrong~~ right, ~5 ms or ~10 ms.\n"},
	{"inline code", "Run `go test` now.\n", 60, "Run `go test` now.\n"},
	{"inline code with backtick", "Use ``a`b`` or `` `x` ``.\n", 60, "Use ``a`b`` or `` `x` ``.\n"},
	{"hard break", "first  \nsecond\\\nthird\n", 40, "first\nsecond\nthird\n"},
	{"escapes and entities", "\\*not em\\* &amp; &copy; &#x41; &#65; &bogus;\n", 40,
		"*not em* & © A A &bogus;\n"},
	{"fenced code", "Text:\n\n```go\nfunc f() {\n\treturn  \n}\n\n// a line far wider than twenty columns\n```\n", 20,
		"Text:\n\n  go\n  func f() {\n  \treturn\n  }\n\n  // a line far wider than twenty columns\n"},
	{"indented code", "Para.\n\n    x := 1\n    y := 2\n", 40, "Para.\n\n  x := 1\n  y := 2\n"},
	{"unclosed fence", "```\ncode\n", 40, "  code\n"},
	{"bullets", "* one\n* two\n+ three\n", 40, "- one\n- two\n\n- three\n"},
	{"bullet wrap", "- a list item long enough to wrap\n- short\n", 20,
		"- a list item long\n  enough to wrap\n- short\n"},
	{"ordered aligned", "8. eight\n9. nine\n10. ten that wraps onto the next line\n", 24,
		" 8. eight\n 9. nine\n10. ten that wraps onto\n    the next line\n"},
	{"ordered start", "3) three\n4) four\n", 40, "3) three\n4) four\n"},
	{"nested", "- outer\n  - inner\n    1. deep\n- back\n", 40,
		"- outer\n  - inner\n    1. deep\n- back\n"},
	{"loose list", "- one\n\n- two\n\n  second para\n", 40, "- one\n\n- two\n\n  second para\n"},
	{"tasks", "- [ ] todo\n- [x] done that wraps onto another line\n- [link](u)\n", 24,
		"- [ ] todo\n- [x] done that wraps\n  onto another line\n- link (u)\n"},
	{"empty item", "-\n- b\n", 40, "-\n- b\n"},
	{"blockquote", "> quoted text that is long enough to wrap\n>\n> two\n", 20,
		"│ quoted text that\n│ is long enough to\n│ wrap\n│\n│ two\n"},
	{"nested quote", "> a\n>> b\n", 40, "│ a\n│\n│ │ b\n"},
	{"quote in list", "- item\n\n  > q\n\n  ```\n  c\n  ```\n", 40, "- item\n\n  │ q\n\n    c\n"},
	{"links", "A [link](https://x.io/a), [https://x.io](https://x.io), <https://a.b>, <me@x.org>, https://bare.io/p_q_r.\n", 80,
		"A link (https://x.io/a), https://x.io, https://a.b, me@x.org,\nhttps://bare.io/p_q_r.\n"},
	{"image", "![diagram](d.png) ![](e.png)\n", 40, "diagram (d.png) image (e.png)\n"},
	{"long word", "abcdefghijklmnopqrstuvwxyz0123456789 end\n", 20,
		"abcdefghijklmnopqrst\nuvwxyz0123456789 end\n"},
	{"thematic break", "a\n\n---\n\nb\n", 20, "a\n\n" + strings.Repeat("─", 20) + "\n\nb\n"},
	{"html block", "<div>\n  <b>x</b>\n</div>\n\nafter\n", 40, "<div>\n  <b>x</b>\n</div>\n\nafter\n"},
	{"inline html", "Press <kbd>q</kbd> to quit.\n", 40, "Press <kbd>q</kbd> to quit.\n"},
	{"cjk", "中文文本测试：这是一个很长的句子，用于测试宽字符的换行。\n", 20,
		"中文文本测试：这是一\n个很长的句子，用于测\n试宽字符的换行。\n"},
	{"cjk after latin", "See 这是一个很长的句子用于测试\n", 20, "See 这是一个很长的句\n子用于测试\n"},
	{"table", "| Name | Qty | Note |\n|:-----|----:|:----:|\n| apple | 3 | red |\n| kiwi | 12 | `a \\| b` |\n", 40,
		"Name  │ Qty │  Note\n──────┼─────┼────────\napple │   3 │   red\nkiwi  │  12 │ `a | b`\n"},
	{"table short rows", "a | b\n--|--\n1\n1 | 2 | 3\n", 40, "a │ b\n──┼──\n1 │\n1 │ 2\n"},
	{"table wraps cells", "| k | description |\n|---|---|\n| a | one two three four five six |\n| b | x |\n", 20,
		"k │ description\n──┼" + strings.Repeat("─", 17) + "\na │ one two three\n  │ four five six\n──┼" + strings.Repeat("─", 17) + "\nb │ x\n"},
	{"table br", "| a |\n|---|\n| x<br>y |\n", 40, "a\n─\nx\ny\n"},
	{"table too wide", "| a | b | c | d |\n|---|---|---|---|\n| 1 | 2 | 3 | `\\|` |\n", 20, "a | b | c | d\n1 | 2 | 3 | `|`\n"},
	{"deep nesting", strings.Repeat(">", 12) + " deep\n", 80,
		strings.Repeat("│ ", 10) + "deep\n"},
	{"not a table", "a\n:--\n", 40, "a :--\n"},
}

func TestPlain(t *testing.T) {
	for _, tc := range plainCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Markdown(tc.md, Options{Width: tc.width})
			if got != tc.want {
				t.Errorf("input %q\ngot:\n%s\nwant:\n%s\ngot  %q\nwant %q", tc.md, got, tc.want, got, tc.want)
			}
		})
	}
}

func TestWidthOption(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, 80}, {-3, 80}, {5, 20}, {20, 20}, {100, 100}, {500, 120}} {
		got := Markdown("---", Options{Width: tc.in})
		if w := textWidth(strings.TrimSuffix(got, "\n")); w != tc.want {
			t.Errorf("Width %d: rule is %d columns, want %d", tc.in, w, tc.want)
		}
	}
}

func TestEndsWithOneNewline(t *testing.T) {
	for _, md := range []string{"", "\n\n\n", "x", "x\n\n\n", "```\n\n\n```\n\n", "> \n>\n", "- \n"} {
		for _, color := range []bool{false, true} {
			got := Markdown(md, Options{Color: color})
			if !strings.HasSuffix(got, "\n") || strings.HasSuffix(got, "\n\n") {
				t.Errorf("Markdown(%q, color=%v) = %q, want exactly one trailing newline", md, color, got)
			}
		}
	}
}

// TestHostileInput checks that escape sequences and other control
// characters in an answer cannot reach the terminal, whether they are
// written raw or as character references.
func TestHostileInput(t *testing.T) {
	md := "a\x1b[31mred\x1b[0m \x07bell \x9b2J &#27;[2J &#x9b; `\x1b]0;title\x07` \xff\xfe\r\n```\n\x1b[1m\n```\n"
	plain := Markdown(md, Options{})
	if strings.ContainsRune(plain, '\x1b') || strings.ContainsRune(plain, '\x07') || strings.ContainsRune(plain, '\u009b') {
		t.Errorf("control characters leaked into plain output: %q", plain)
	}
	color := stripANSI(Markdown(md, Options{Color: true}))
	if strings.ContainsRune(color, '\x1b') || strings.ContainsRune(color, '\u009b') {
		t.Errorf("control characters leaked into colour output: %q", color)
	}
}

func TestConcurrentUse(t *testing.T) {
	want := Markdown(benchDoc, Options{Width: 72, Color: true})
	done := make(chan string)
	for range 8 {
		go func() { done <- Markdown(benchDoc, Options{Width: 72, Color: true}) }()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Fatal("concurrent calls rendered differently")
		}
	}
}

func TestFallbackOnPanic(t *testing.T) {
	saved := renderFunc
	defer func() { renderFunc = saved }()
	renderFunc = func([]byte, Options) string { panic("boom") }
	if got := Markdown("# a  \n\x1b[2Jb\n", Options{Color: true}); got != "# a\nb\n" {
		t.Errorf("fallback = %q, want the sanitised source", got)
	}
}

// TestPathologicalInputStaysLinear guards against inputs whose rendering
// used to grow quadratically: every nesting level copying every line, and
// a delimiter row with thousands of columns padding every row to match.
func TestPathologicalInputStaysLinear(t *testing.T) {
	for name, md := range map[string]string{
		"quotes": strings.Repeat(">", 20000) + " x\n",
		"lists":  strings.Repeat("- ", 5000) + "x\n",
		"table":  "a\n" + strings.Repeat("|-", 3000) + "|\n" + strings.Repeat("x\n", 3000),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := Markdown(md, Options{Width: 80, Color: true})
		runtime.ReadMemStats(&after)
		if len(out) > 10*len(md) {
			t.Errorf("%s: %d bytes of input rendered to %d bytes", name, len(md), len(out))
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
			t.Errorf("%s: rendering %d bytes allocated %d MB", name, len(md), alloc>>20)
		}
	}
}

// The model's escape sequences never reach the terminal through the
// renderer: not in text, code, links or tables, and not spelled as HTML
// character references either. Only ralph's own styling does.
func TestModelEscapesAreRemoved(t *testing.T) {
	md := "# title\x1b]0;pwned\x07\n\nclear\x1b[2J me \u009b31m and &#27;[2J\n\n```\ncode\x1b[8m hidden\n```\n\n" +
		"| a\x1b[5m | b |\n|---|---|\n| 1 | 2\r\x1b[K |\n\n[link\x1b]8;;http://evil\x07](http://x)\n"
	for _, color := range []bool{false, true} {
		out := Markdown(md, Options{Width: 80, Color: color})
		for _, bad := range []string{"\x1b]", "\x07", "\x1b[2J", "\x1b[8m", "\x1b[5m", "\u009b", "\r", "pwned"} {
			if strings.Contains(out, bad) {
				t.Errorf("color %v: %q reached the output:\n%q", color, bad, out)
			}
		}
		if !color && strings.Contains(out, "\x1b") {
			t.Errorf("plain output holds ESC: %q", out)
		}
	}
}
