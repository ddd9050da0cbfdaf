// Package render turns ralph's markdown answers into text for a terminal.
//
// The rendering itself is glamour's (github.com/charmbracelet/glamour):
// headings, lists, tables, quotes, links, and code blocks highlighted by
// chroma, in glamour's dark, light or notty style. This package is the thin
// seam the faces call, and it keeps only what glamour does not do:
//
//   - Untrusted text is made harmless first: the model's escape sequences
//     and control characters are removed (StripControls of memory/text),
//     and so are numeric character references to control characters,
//     which goldmark would turn back into raw ESC bytes. Whatever else
//     reaches glamour's output that is not an SGR sequence is dropped as a
//     second line of defence, so only styling reaches the terminal.
//   - Glamour pads every line with spaces to the wrap width and frames the
//     document with blank lines; the padding is trimmed (keeping spaces
//     that carry a background colour), so copied text has no trailing
//     blanks and the output ends with exactly one newline.
//   - A document glamour would take long to render (see limits.go) is
//     shown as it is.
//   - Without colour (NO_COLOR, --no-color, a dumb terminal) there is no
//     rendering at all: the answer is printed as it is, which is what
//     scripts and people who turned colour off expect.
//
// Nothing here costs a start of ralph that renders nothing: chroma, glamour
// and goldmark are patched copies (third_party/) that build their lexers,
// styles and expressions on first use, and so is everything in this
// package (see docs/development.md, "Start-up budget").
package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	"github.com/muesli/termenv"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"

	rtext "github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// The styles a caller may ask for; anything else renders as StyleDark.
const (
	StyleDark  = "dark"
	StyleLight = "light"
	// StyleNoTTY is glamour's layout without any colour or attribute.
	StyleNoTTY = "notty"
)

// Options controls how Markdown lays out its output.
type Options struct {
	// Width is the wrap width in columns (the terminal's width); <= 0
	// means 80, and less than 20 is taken as 20.
	Width int
	// Color false means plain: the answer as it is, without escape
	// sequences (NO_COLOR, --no-color, dumb terminals).
	Color bool
	// Style is StyleDark (the default), StyleLight or StyleNoTTY.
	Style string
}

const (
	defaultWidth = 80
	minWidth     = 20
)

// Markdown renders md for a terminal. It never fails on any input and
// never panics: if glamour fails, the sanitised text is returned as is.
func Markdown(md string, opt Options) (out string) {
	text := stripControls(md)
	if !opt.Color {
		return plain(text)
	}
	src := sanitize(text)
	if tooCostly(src) {
		return plain(text)
	}
	defer func() {
		// An answer must reach the user even if some input trips a bug in
		// glamour, chroma or goldmark.
		if recover() != nil {
			out = plain(text)
		}
	}()
	out, err := renderFunc(src, opt)
	if err != nil {
		return plain(text)
	}
	return out
}

// renderFunc is a variable only so that a test can make it fail or panic
// and check the fallbacks above.
var renderFunc = render

// render is Markdown without the safety net, so that the fuzz test sees
// the panics that Markdown would hide.
func render(src string, opt Options) (string, error) {
	width := opt.Width
	if width <= 0 {
		width = defaultWidth
	}
	width = max(width, minWidth)
	style := opt.Style
	if style != StyleLight && style != StyleNoTTY {
		style = StyleDark
	}
	out, err := renderers.render(protectProse(src, width), style, width)
	if err != nil {
		return "", err
	}
	return terminal.RestoreHyphens(finish(fitWidth(out, width))), nil
}

// protectProse keeps glamour from breaking hyphenated words that fit on a
// line (four cells are left for its margins): its wrapper breaks after
// any hyphen, which left "Ctrl-" at the end of one line and
// "D" on the next. Hyphens inside words become non-breaking ones (see
// terminal.ProtectHyphens), and render turns them back after glamour.
// Fenced code is left alone, since chroma must see the code as written.
func protectProse(src string, width int) string {
	if !strings.Contains(src, "-") || strings.ContainsRune(src, '\u2011') {
		return src
	}
	lines := strings.SplitAfter(src, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```"):
			fence = "```"
		case strings.HasPrefix(t, "~~~"):
			fence = "~~~"
		default:
			lines[i] = terminal.ProtectHyphens(l, width-4)
		}
	}
	return strings.Join(lines, "")
}

// fitWidth wraps any line glamour left wider than the terminal (a long
// word, a code line) with the one wrapping rule (terminal.Wrap), so the
// terminal never cuts one itself in the middle of a word. It runs before
// the padding is trimmed, so every line it makes ends with a reset too.
func fitWidth(out string, width int) string {
	return terminal.Wrap(out, width)
}

// rendererKey names one configured glamour renderer.
type rendererKey struct {
	style string
	width int
}

// rendererCache keeps one glamour renderer per style and width. A
// renderer is not safe for concurrent use (glamour's ANSI renderer keeps
// a block stack while it walks a document), so rendering holds the lock;
// answers are rendered once per turn, so nobody waits in practice.
type rendererCache struct {
	mu sync.Mutex
	m  map[rendererKey]goldmark.Markdown
}

var renderers = &rendererCache{}

func (c *rendererCache) render(src, style string, width int) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := rendererKey{style, width}
	defer func() {
		// A renderer that panicked halfway may hold state from that
		// document; the next one gets a fresh renderer.
		if p := recover(); p != nil {
			delete(c.m, k)
			panic(p)
		}
	}()
	md := c.m[k]
	if md == nil {
		md = newRenderer(style, width)
		if c.m == nil {
			c.m = map[rendererKey]goldmark.Markdown{}
		}
		c.m[k] = md
	}
	var out strings.Builder
	if err := md.Convert([]byte(src), &out); err != nil {
		return "", fmt.Errorf("rendering markdown: %w", err)
	}
	return out.String(), nil
}

// glamourPriority is the priority glamour gives its ANSI renderer.
const glamourPriority = 1000

// newRenderer is glamour's terminal renderer as glamour.NewTermRenderer
// builds it (GitHub-flavoured markdown, definition lists, heading ids),
// assembled here so that the parser also gets htmlAsText: glamour offers
// no option to keep raw HTML, which it strips (see html.go).
//
// The style is given as a value rather than by name: by name, glamour's
// "auto" would query the terminal itself, on every renderer, with a 5 s
// timeout. ralph decides the style once (scripts/screen/terminal). 256 colours
// is what chroma's terminal formatter writes for code anyway.
func newRenderer(style string, width int) goldmark.Markdown {
	cfg := styles.DarkStyleConfig()
	switch style {
	case StyleLight:
		cfg = styles.LightStyleConfig()
	case StyleNoTTY:
		cfg = styles.NoTTYStyleConfig()
	}
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.DefinitionList),
		goldmark.WithParserOptions(parser.WithAutoHeadingID(), htmlParserOption),
	)
	ar := ansi.NewRenderer(ansi.Options{WordWrap: width, ColorProfile: termenv.ANSI256, Styles: cfg})
	md.SetRenderer(renderer.NewRenderer(renderer.WithNodeRenderers(util.Prioritized(ar, glamourPriority))))
	return md
}

// stripControls removes the model's escape sequences and control
// characters (StripControls, the one rule for text ralph did not write),
// after normalising line endings to "\n" so that a carriage return still
// ends a line.
func stripControls(md string) string {
	if strings.Contains(md, "\r") {
		md = strings.ReplaceAll(strings.ReplaceAll(md, "\r\n", "\n"), "\r", "\n")
	}
	return rtext.StripControls(md)
}

// sanitize prepares stripped text for glamour: tabs become four spaces so
// that widths are known, and numeric character references to control
// characters are defused (see controlRefs).
func sanitize(text string) string {
	text = strings.ReplaceAll(text, "\t", "    ")
	if strings.Contains(text, "&#") {
		text = controlRefs().ReplaceAllStringFunc(text, defuseRef)
	}
	return text
}

// controlRefs matches numeric character references. goldmark resolves
// "&#27;" to a raw ESC, so "&#27;[2J" in an answer would clear the screen
// after StripControls had passed it as harmless text.
var controlRefs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`&#(?:[0-9]{1,8}|[xX][0-9a-fA-F]{1,8});`) })

// defuseRef replaces a reference to a control character (other than tab
// and newline) with U+FFFD, goldmark's own replacement for references it
// cannot use. Inside code spans, where references are not resolved, the
// text shows "�" instead of the reference: a small price for a rule that
// needs no markdown parser of its own.
func defuseRef(ref string) string {
	num := ref[2 : len(ref)-1]
	base := 10
	if num[0] == 'x' || num[0] == 'X' {
		num, base = num[1:], 16
	}
	v, err := strconv.ParseUint(num, base, 32)
	if err != nil {
		return ref
	}
	if v != '\t' && v != '\n' && (v < 0x20 || v >= 0x7f && v <= 0x9f) {
		return "\uFFFD"
	}
	return ref
}

// plain is the answer as it is, ending with exactly one newline so that
// callers can print it as is.
func plain(src string) string {
	src = strings.TrimRight(src, "\n")
	if strings.TrimSpace(src) == "" {
		return "\n"
	}
	return src + "\n"
}
