// Package render turns ralph's markdown answers into text for a terminal.
//
// It parses with goldmark directly instead of going through glamour, whose
// chroma style and lexer registries cost about 17 ms of package init at
// every process start, far over ralph's start-up budget. Only goldmark's
// core packages are imported (about 0.5 ms of init); the GFM features we
// need are implemented in ext.go rather than imported from
// goldmark/extension, and the parser itself is built on first use.
package render

import (
	"strings"
	"sync"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	rtext "github.com/ralph-dev/ralph/memory/text"
)

// Options controls how Markdown lays out its output.
type Options struct {
	Width int  // wrap width in columns; <= 0 means 80; clamped to [20, 120]
	Color bool // false: plain text, no escape sequences at all (NO_COLOR, --no-color, dumb terminals)
}

const (
	defaultWidth = 80
	minWidth     = 20
	maxWidth     = 120
)

// mdParser is built on first use so that commands which never render
// markdown do not pay for it. goldmark parsers keep all per-document state
// in the parse context, so one parser serves concurrent calls.
var mdParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
			util.Prioritized(taskParser{}, 0),
			util.Prioritized(strikethroughParser{}, 500))...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(tableTransformer{}, 200))...),
	)
})

// Markdown renders md for a terminal. It never fails on any input
// (malformed markdown renders as text) and never panics.
func Markdown(md string, opt Options) (out string) {
	src := sanitize(md)
	defer func() {
		// goldmark is well fuzzed, but an answer must reach the user even if
		// some input trips a bug in it or in us, so fall back to the text.
		if recover() != nil {
			out = finish(strings.Split(string(src), "\n"))
		}
	}()
	return renderFunc(src, opt)
}

// renderFunc is a variable only so that a test can make it panic and
// check the fallback above.
var renderFunc = render

// render is Markdown without the safety net, so that the fuzz test sees
// the panics that Markdown would hide.
func render(src []byte, opt Options) string {
	width := opt.Width
	if width <= 0 {
		width = defaultWidth
	}
	width = min(max(width, minWidth), maxWidth)
	r := &renderer{src: src, color: opt.Color}
	doc := mdParser().Parse(text.NewReader(src))
	return finish(r.children(doc, width, nil))
}

// finish joins lines into the final text: no trailing spaces, no blank
// lines at either end, and exactly one newline at the end so callers can
// print it as is.
func finish(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	n := 1
	for _, l := range lines {
		n += len(l) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(l, " \t"))
	}
	b.WriteByte('\n')
	return b.String()
}

// sanitize makes the input safe to lay out and print: escape sequences and
// control characters are removed (StripControls of memory/text, the one rule for
// text ralph did not write) and invalid UTF-8 becomes U+FFFD, because an
// escape sequence in a model's answer must not drive the user's terminal
// and would break width arithmetic. Line endings are normalised to "\n"
// first, so a carriage return still ends a line.
func sanitize(md string) []byte {
	if strings.Contains(md, "\r") {
		md = strings.ReplaceAll(strings.ReplaceAll(md, "\r\n", "\n"), "\r", "\n")
	}
	return []byte(rtext.StripControls(md))
}
