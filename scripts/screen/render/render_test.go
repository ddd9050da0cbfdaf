package render

import (
	"errors"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
)

var sgrRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripSGR(s string) string { return sgrRE.ReplaceAllString(s, "") }

// fgColors are the distinct 256-colour foregrounds set in s.
func fgColors(s string) map[string]bool {
	set := map[string]bool{}
	for _, m := range regexp.MustCompile("\x1b\\[(?:[0-9;]*;)?38;5;([0-9]+)[;m]").FindAllStringSubmatch(s, -1) {
		set[m[1]] = true
	}
	return set
}

const goAnswer = "Here is the fix:\n\n```go\npackage main\n\nimport \"fmt\"\n\n// main says hi.\nfunc main() {\n\tfmt.Println(\"hi\", 42)\n}\n```\n\nRun it with `go run .`.\n"

// hostileDoc carries escape sequences and control characters in every
// place markdown can hold text, raw and as character references.
const hostileDoc = "# title\x1b]0;pwned\x07\n\nclear\x1b[2J me \u009b31m and &#27;[2J &#x1B;[31m &#155;1m\n\n```\ncode\x1b[8m hidden\n```\n\n" +
	"| a\x1b[5m | b |\n|---|---|\n| 1 | 2\r\x1b[K |\n\n[link\x1b]8;;http://evil\x07](http://x)\n\n> q &#7; \x07bell\n"

func TestPlainIsTheAnswer(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"", "\n"},
		{"\n\n", "\n"},
		{"hi", "hi\n"},
		{"# Title\n\n**bold** and `code`\n\n\n", "# Title\n\n**bold** and `code`\n"},
		{"```go\nfunc f() {\n\treturn\n}\n```", "```go\nfunc f() {\n\treturn\n}\n```\n"},
		{"a\r\nb\x1b[31mc\x1b[0m", "a\nbc\n"},
	} {
		if got := Markdown(tc.md, Options{Width: 20, Style: StyleDark}); got != tc.want {
			t.Errorf("Markdown(%q) without colour = %q, want %q", tc.md, got, tc.want)
		}
	}
}

func TestCodeBlockIsHighlighted(t *testing.T) {
	for _, style := range []string{StyleDark, StyleLight} {
		out := Markdown(goAnswer, Options{Width: 60, Color: true, Style: style})
		var code strings.Builder
		for _, l := range strings.Split(out, "\n") {
			if s := stripSGR(l); strings.Contains(s, "func main") || strings.Contains(s, "Println") || strings.Contains(s, "package main") {
				code.WriteString(l)
			}
		}
		if n := len(fgColors(code.String())); n < 4 {
			t.Errorf("%s: the go code block uses %d colours, want several:\n%q", style, n, code.String())
		}
		if s := stripSGR(out); !strings.Contains(s, `fmt.Println("hi", 42)`) || !strings.Contains(s, "Here is the fix:") {
			t.Errorf("%s: the text is not all there:\n%s", style, s)
		}
	}
}

func TestStyles(t *testing.T) {
	dark := Markdown("Some prose.", Options{Color: true, Style: StyleDark})
	light := Markdown("Some prose.", Options{Color: true, Style: StyleLight})
	if dark == light || stripSGR(dark) != stripSGR(light) {
		t.Errorf("dark and light should differ in colour only:\n%q\n%q", dark, light)
	}
	if unknown := Markdown("Some prose.", Options{Color: true, Style: "mauve"}); unknown != dark {
		t.Errorf("an unknown style should render as dark: %q", unknown)
	}
	notty := Markdown("# Title\n\n- one\n- two\n\n```go\nx := 1\n```\n", Options{Width: 40, Color: true, Style: StyleNoTTY})
	if strings.Contains(notty, "\x1b") {
		t.Errorf("notty holds escapes: %q", notty)
	}
	if want := "  # Title\n\n  • one\n  • two\n\n    x := 1\n"; notty != want {
		t.Errorf("notty = %q, want %q", notty, want)
	}
}

// TestOutputShape checks what this package adds to glamour on every
// construct: lines wrapped at the width, no padding, every styled line
// reset at its end, no blank lines around, one newline at the end.
func TestOutputShape(t *testing.T) {
	doc := benchDoc[:2000] + "\n漢字かなカナ한국어 mixed with English words and more 漢字 text here and on\n\n" +
		"Supercalifragilisticexpialidocious-and-then-some-more-characters-to-force-a-split word.\n"
	for _, width := range []int{20, 33, 47, 80, 121, 200} {
		for _, style := range []string{StyleDark, StyleLight, StyleNoTTY} {
			out := Markdown(doc, Options{Width: width, Color: true, Style: style})
			if !strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n") || strings.HasPrefix(out, "\n") {
				t.Errorf("width %d %s: blank lines around the output: %q", width, style, out)
			}
			inCode := false
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				visible := stripSGR(line)
				if strings.Contains(visible, "func (p *Pool)") {
					inCode = true // code is never wrapped
				}
				if w := runewidth.StringWidth(visible); w > width && !inCode && !hasLongWord(visible, width) {
					t.Errorf("width %d %s: line is %d columns: %q", width, style, w, visible)
				}
				if strings.HasSuffix(visible, " ") && !endsOnBackground(line) {
					t.Errorf("width %d %s: trailing spaces: %q", width, style, line)
				}
				if seqs := sgrRE.FindAllString(line, -1); len(seqs) > 0 && !strings.HasSuffix(line, sgrReset) {
					t.Errorf("width %d %s: line does not end with a reset: %q", width, style, line)
				}
				if strings.HasPrefix(visible, "  }") {
					inCode = false
				}
			}
		}
	}
}

// endsOnBackground reports whether the last character of line is drawn
// with a background colour.
func endsOnBackground(line string) bool {
	bg := false
	for _, m := range regexp.MustCompile("\x1b\\[([0-9;]*)m|[^\x1b]").FindAllStringSubmatch(strings.TrimSuffix(line, sgrReset), -1) {
		if strings.HasPrefix(m[0], "\x1b") {
			bg = background(bg, m[1])
		}
	}
	return bg
}

// hasLongWord reports whether s holds a word wider than width, which
// glamour leaves whole (a URL, say).
func hasLongWord(s string, width int) bool {
	for _, w := range strings.Fields(s) {
		if runewidth.StringWidth(w) > width-4 {
			return true
		}
	}
	return false
}

func TestWidthOption(t *testing.T) {
	long := strings.Repeat("word ", 100)
	for _, tc := range []struct{ in, want int }{{0, 80}, {-3, 80}, {5, 20}, {20, 20}, {100, 100}, {300, 300}} {
		out := Markdown(long, Options{Width: tc.in, Color: true})
		w := 0
		for _, l := range strings.Split(stripSGR(out), "\n") {
			w = max(w, runewidth.StringWidth(l))
		}
		if w > tc.want || w < tc.want-8 {
			t.Errorf("Width %d: lines up to %d columns, want about %d", tc.in, w, tc.want)
		}
	}
}

// The model's escape sequences never reach the terminal through the
// renderer: not in text, code, links, tables or quotes, and not spelled
// as character references either. Only the styling does.
func TestModelEscapesAreRemoved(t *testing.T) {
	for _, o := range []Options{{Width: 80}, {Width: 80, Color: true}, {Width: 30, Color: true, Style: StyleLight}, {Color: true, Style: StyleNoTTY}} {
		out := Markdown(hostileDoc, o)
		for _, bad := range []string{"\x1b]", "\x07", "\x1b[2J", "\x1b[8m", "\x1b[5m", "\x1b[31m", "\x1b[K", "\u009b", "\r", "pwned"} {
			if strings.Contains(out, bad) {
				t.Errorf("%+v: %q reached the output:\n%q", o, bad, out)
			}
		}
		if strings.ContainsRune(stripSGR(out), '\x1b') {
			t.Errorf("%+v: an escape other than SGR reached the output: %q", o, out)
		}
		if !o.Color && strings.Contains(out, "\x1b") {
			t.Errorf("plain output holds ESC: %q", out)
		}
	}
	// References to printable characters still work.
	if out := stripSGR(Markdown("&#65;&#x42; &amp; &copy;", Options{Color: true})); !strings.Contains(out, "AB & ©") {
		t.Errorf("references = %q", out)
	}
}

func TestTrimLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"\x1b[38;5;252m \x1b[0m\x1b[38;5;252m \x1b[0m", ""},
		{"  text   ", "  text"},
		{"\x1b[38;5;252mtext\x1b[0m\x1b[38;5;252m \x1b[0m  ", "\x1b[38;5;252mtext\x1b[0m"},
		// A space with a background colour is part of the text.
		{"\x1b[38;5;228;48;5;63;1m Title \x1b[0m\x1b[38;5;252m   \x1b[0m", "\x1b[38;5;228;48;5;63;1m Title \x1b[0m"},
		{"\x1b[44m x \x1b[49m  ", "\x1b[44m x \x1b[0m"},
		// "38;5;48" is a foreground colour, not a background.
		{"\x1b[38;5;48mx \x1b[0m", "\x1b[38;5;48mx\x1b[0m"},
		// Escapes other than SGR and control characters are dropped.
		{"a\x1b[2Jb\x1b]0;t\x07c\x1bXd\x01", "ab0;tcd"},
	} {
		if got := trimLine(tc.in); got != tc.want {
			t.Errorf("trimLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	want := Markdown(benchDoc, Options{Width: 72, Color: true})
	done := make(chan string)
	for i := range 8 {
		go func() {
			done <- Markdown(benchDoc, Options{Width: 72 - i%2, Color: true})
		}()
	}
	for range 8 {
		if got := <-done; stripSGR(got) == "" {
			t.Fatal("a concurrent call rendered nothing")
		}
	}
	if got := Markdown(benchDoc, Options{Width: 72, Color: true}); got != want {
		t.Fatal("the same document rendered differently")
	}
}

func TestFallbacks(t *testing.T) {
	saved := renderFunc
	defer func() { renderFunc = saved }()
	for name, f := range map[string]func(string, Options) (string, error){
		"panic": func(string, Options) (string, error) { panic("boom") },
		"error": func(string, Options) (string, error) { return "", errors.New("boom") },
	} {
		renderFunc = f
		if got := Markdown("# a\n\x1b[2Jb\n", Options{Color: true}); got != "# a\nb\n" {
			t.Errorf("%s: fallback = %q, want the sanitised source", name, got)
		}
	}
}

// TestPathologicalInput guards against inputs whose rendering grows out
// of proportion: deep nesting and a delimiter row with thousands of
// columns.
func TestPathologicalInput(t *testing.T) {
	for name, md := range map[string]string{
		"quotes": strings.Repeat(">", 2000) + " x\n",
		"lists":  strings.Repeat("- ", 500) + "x\n",
		"table":  "a\n" + strings.Repeat("|-", 3000) + "|\n" + strings.Repeat("x\n", 3000),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		out := Markdown(md, Options{Width: 80, Color: true})
		d := time.Since(start)
		runtime.ReadMemStats(&after)
		if out == "" || d > 5*time.Second {
			t.Errorf("%s: %d bytes of input took %s", name, len(md), d)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 500<<20 {
			t.Errorf("%s: rendering %d bytes allocated %d MB", name, len(md), alloc>>20)
		}
	}
}

func TestTooCostly(t *testing.T) {
	for _, tc := range []struct {
		md   string
		want bool
	}{
		{benchDoc, false},
		{strings.Repeat("- ", maxDepth) + "x\n", false},
		{strings.Repeat("- ", maxDepth+1) + "x\n", true},
		{strings.Repeat(">", maxDepth+1) + " x\n", true},
		{strings.Repeat("x\n\n", maxBlocks), false},
		{strings.Repeat("x\n\n", maxBlocks+1), true},
		{"a " + strings.Repeat("w", maxWord+1), true},
		{"`" + strings.Repeat("w", maxWord+1) + "`", true},
		{"```\n" + strings.Repeat("w", maxWord+1) + "\n```\n", false},
		{"|a|b|\n|-|-|\n" + strings.Repeat("|x|y|\n", maxCells/2), true},
		{strings.Repeat("x", maxBytes+1), true},
		{"a\n" + strings.Repeat("|-", maxColumns+1) + "\n", true},
		{"|" + strings.Repeat(" a |", maxColumns-1) + "\n", false},
	} {
		if got := tooCostly(tc.md); got != tc.want {
			t.Errorf("tooCostly(%.40q…) = %v, want %v", tc.md, got, tc.want)
		}
	}
	// Beyond the bounds the answer is shown as it is.
	md := strings.Repeat(">", maxDepth+1) + " x\n"
	if got := Markdown(md, Options{Color: true}); got != md {
		t.Errorf("a costly document rendered as %q", got)
	}
}

// Glamour's wrapper breaks after any hyphen; rendered prose must move a
// hyphenated word to the next line whole ("Ctrl-D", "up-to-date").
func TestHyphenatedWordsStayWhole(t *testing.T) {
	md := "At an idle prompt Ctrl-C clears the line; Ctrl-C twice or Ctrl-D leaves. Keep the tree up-to-date with main, always."
	for _, w := range []int{20, 27, 33, 41, 58} {
		out := anySGRForTest.ReplaceAllString(Markdown(md, Options{Width: w, Color: true, Style: StyleDark}), "")
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasSuffix(l, "-") || strings.HasPrefix(l, "D ") || strings.HasPrefix(l, "date") || strings.HasPrefix(l, "to-date") {
				t.Errorf("width %d: a hyphenated word was split:\n%s", w, out)
				break
			}
		}
	}
}

var anySGRForTest = regexp.MustCompile("\x1b\\[[0-9;]*m")
