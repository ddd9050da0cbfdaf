package render

import (
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// inlines appends the pieces for n's inline children, each styled as st
// plus whatever its own markup adds.
func (r *renderer) inlines(n ast.Node, st style, ps []piece) []piece {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok || !mergeable(t) {
			ps = r.inline(c, st, ps)
			continue
		}
		// goldmark splits text at every character that might have been
		// markup ("_", "*", "[" …). Joining the run back together lets a
		// bare URL or a word be seen whole, and makes fewer pieces.
		var b []byte
		for ; mergeable(t); t = t.NextSibling().(*ast.Text) {
			b = append(b, r.textValue(t)...)
		}
		b = append(b, r.textValue(t)...)
		ps = r.words(string(b), st, ps)
		ps = lineBreak(t, st, ps)
		c = t
	}
	return ps
}

// mergeable reports whether t runs straight on into another text node.
func mergeable(t *ast.Text) bool {
	if t.SoftLineBreak() || t.HardLineBreak() {
		return false
	}
	_, ok := t.NextSibling().(*ast.Text)
	return ok
}

func (r *renderer) textValue(t *ast.Text) string {
	v := t.Segment.Value(r.src)
	if t.IsRaw() {
		return string(v)
	}
	return decode(v)
}

func lineBreak(t *ast.Text, st style, ps []piece) []piece {
	if t.HardLineBreak() {
		return append(ps, piece{brk: true})
	}
	if t.SoftLineBreak() {
		return append(ps, piece{text: " ", w: 1, st: st, space: true})
	}
	return ps
}

func (r *renderer) inline(n ast.Node, st style, ps []piece) []piece {
	switch n := n.(type) {
	case *ast.Text:
		return lineBreak(n, st, r.words(r.textValue(n), st, ps))
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			return r.words(string(n.Value), st, ps)
		}
		return r.words(decode(n.Value), st, ps)
	case *ast.CodeSpan:
		return r.codeSpan(n, st, ps)
	case *ast.Emphasis:
		a := attrItalic
		if n.Level >= 2 {
			a = attrBold
		}
		return r.inlines(n, st.with(attr(a)), ps)
	case *east.Strikethrough:
		if r.color {
			return r.inlines(n, st.with(attr(attrStrike)), ps)
		}
		// Without colour the markers are the only way to tell the reader
		// that the text is struck out, and that changes its meaning.
		ps = append(ps, piece{text: "~~", w: 2, st: st})
		ps = r.inlines(n, st, ps)
		return append(ps, piece{text: "~~", w: 2, st: st})
	case *ast.Link:
		start := len(ps)
		ps = r.inlines(n, st.with(styleLinkText), ps)
		return r.linkTarget(decode(n.Destination), ps, start)
	case *ast.Image:
		start := len(ps)
		ps = r.inlines(n, st.with(styleLinkText), ps)
		if len(ps) == start {
			ps = append(ps, piece{text: "image", w: 5, st: st.with(styleLinkText)})
		}
		return r.linkTarget(decode(n.Destination), ps, start)
	case *ast.AutoLink:
		return r.words(string(n.Label(r.src)), st.with(styleURL), ps)
	case *ast.RawHTML:
		return r.rawHTML(n, st, ps)
	case *east.TaskCheckBox:
		box, bst := "[ ]", styleDim
		if n.IsChecked {
			box, bst = "[x]", styleTaskDone
		}
		return append(ps, piece{text: box, w: 3, st: st.with(bst)},
			piece{text: " ", w: 1, space: true})
	default:
		return r.inlines(n, st, ps)
	}
}

// linkTarget appends " (url)" after a link's text, unless the text already
// is the URL: a terminal cannot hide a target behind text, so the reader
// needs to see it, but printing it twice is noise.
func (r *renderer) linkTarget(url string, ps []piece, start int) []piece {
	if url == "" {
		return ps
	}
	var sb strings.Builder
	for _, p := range ps[start:] {
		sb.WriteString(p.text)
	}
	if t := sb.String(); t == url || "mailto:"+t == url {
		return ps
	}
	u := "(" + url + ")"
	return append(ps, piece{text: " ", w: 1, space: true},
		piece{text: u, w: textWidth(u), st: r.base.with(styleDim)})
}

// codeSpan renders `code`. Plain mode keeps the backticks because they are
// the only marker left; colour mode replaces them with a padding column of
// the code background, which keeps the layout of the two modes identical.
func (r *renderer) codeSpan(n *ast.CodeSpan, st style, ps []piece) []piece {
	var b []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b = append(b, t.Segment.Value(r.src)...)
		}
	}
	for i, c := range b {
		if c == '\n' || c == '\t' {
			b[i] = ' '
		}
	}
	code := string(b)
	if r.inCell {
		// A pipe inside a table cell has to be escaped even in code, where
		// the backslash would otherwise survive.
		code = strings.ReplaceAll(code, `\|`, "|")
	}
	cst := st.with(styleCode)
	open, closing := " ", " "
	if !r.color {
		open, closing = codeDelimiters(code)
		cst = st
	}
	ps = append(ps, piece{text: open, w: len(open), st: cst})
	for code != "" {
		i := strings.IndexByte(code, ' ')
		if i == 0 {
			j := len(code) - len(strings.TrimLeft(code, " "))
			ps = append(ps, piece{text: code[:j], w: j, st: cst, space: true})
			code = code[j:]
			continue
		}
		if i < 0 {
			i = len(code)
		}
		ps = append(ps, piece{text: code[:i], w: textWidth(code[:i]), st: cst})
		code = code[i:]
	}
	return append(ps, piece{text: closing, w: len(closing), st: cst})
}

// codeDelimiters returns the markdown delimiters that can quote code: one
// backtick more than its longest backtick run, spaced off if the code
// begins or ends with a backtick.
func codeDelimiters(code string) (open, closing string) {
	longest, run := 0, 0
	for i := 0; i < len(code); i++ {
		if code[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`", "`"
	}
	d := strings.Repeat("`", longest+1)
	if code[0] == '`' || code[len(code)-1] == '`' {
		return d + " ", " " + d
	}
	return d, d
}

// rawHTML shows inline HTML as the text it is, except for <br>, which
// models use for line breaks inside table cells and which would otherwise
// leave tag noise in the middle of a sentence.
func (r *renderer) rawHTML(n *ast.RawHTML, st style, ps []piece) []piece {
	var b []byte
	for i := 0; i < n.Segments.Len(); i++ {
		s := n.Segments.At(i)
		b = append(b, s.Value(r.src)...)
	}
	switch strings.ToLower(strings.ReplaceAll(string(b), " ", "")) {
	case "<br>", "<br/>":
		return append(ps, piece{brk: true})
	}
	return r.words(string(b), st.with(styleDim), ps)
}

// words splits prose into word and space pieces. Runs of whitespace
// collapse to one space, as in any rendered markdown. In colour mode bare
// URLs are highlighted, standing in for GFM's autolink extension without
// paying for its regular expressions at start-up.
func (r *renderer) words(s string, st style, ps []piece) []piece {
	for s != "" {
		i := strings.IndexAny(s, " \t\n")
		if i == 0 {
			j := len(s) - len(strings.TrimLeft(s, " \t\n"))
			ps = append(ps, piece{text: " ", w: 1, st: st, space: true})
			s = s[j:]
			continue
		}
		if i < 0 {
			i = len(s)
		}
		ps = r.word(s[:i], st, ps)
		s = s[i:]
	}
	return ps
}

func (r *renderer) word(w string, st style, ps []piece) []piece {
	if r.color && (strings.HasPrefix(w, "https://") || strings.HasPrefix(w, "http://")) {
		u := strings.TrimRight(w, ".,;:!?'\")")
		ps = append(ps, piece{text: u, w: textWidth(u), st: st.with(styleURL)})
		w = w[len(u):]
		if w == "" {
			return ps
		}
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return cjkWord(w, st, ps)
		}
	}
	return append(ps, piece{text: w, w: len(w), st: st})
}
