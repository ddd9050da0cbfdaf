package render

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// renderer holds the state of one Markdown call. Blocks render to lines
// without their final newline; containers (lists, quotes) render their
// children at a reduced width and then prefix each line, which keeps
// every construct composable at any nesting depth.
type renderer struct {
	src    []byte
	color  bool
	base   style   // style every run inherits; set inside block quotes
	inCell bool    // rendering a table cell, where `\|` means a pipe
	ps     []piece // scratch buffer reused from paragraph to paragraph
	depth  int     // lists and quotes we are inside
}

// maxDepth is how many lists and quotes deep we still indent. Deeper
// content is rendered flat: it would not fit the width anyway, and
// prefixing every line at every level makes pathological input like
// ten thousand ">" quadratic.
const maxDepth = 10

// minInner is the narrowest column nested content is squeezed into.
// Deeply nested lists may then overflow Width, which reads better than
// one word per line.
const minInner = 10

// codeIndent sets code blocks off from prose without a background, which
// would need trailing padding and spoil copy and paste.
const codeIndent = "  "

// styled wraps s in st's escape sequences, or returns it as is in plain mode.
func (r *renderer) styled(s string, st style) string {
	if !r.color || st.isZero() || s == "" {
		return s
	}
	return string(st.appendSGR(nil)) + s + sgrReset
}

// children renders n's child blocks separated by blank lines. Items of a
// tight list are the exception: their paragraph and nested list belong
// together, exactly as in the source.
func (r *renderer) children(n ast.Node, width int, out []string) []string {
	tight := false
	if item, ok := n.(*ast.ListItem); ok {
		if l, ok := item.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		mark := len(out)
		if !first && !tight {
			out = append(out, "")
		}
		before := len(out)
		out = r.block(c, width, out)
		if len(out) == before {
			out = out[:mark] // nothing rendered, so no separator either
			continue
		}
		first = false
	}
	return out
}

// block appends the lines of one block node laid out in width columns.
func (r *renderer) block(n ast.Node, width int, out []string) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.prose(n, r.base, nil, width, out)
	case *ast.Heading:
		st := r.base.with(headingStyle(n.Level))
		var prefix []piece
		if n.Level >= 4 {
			// Deep headings all look alike in colour, so keep the level
			// visible; the top three are told apart by colour and rank.
			h := strings.Repeat("#", min(n.Level, 6))
			prefix = []piece{{text: h, w: len(h), st: st}, {text: " ", w: 1, st: st, space: true}}
		}
		return r.prose(n, st, prefix, width, out)
	case *ast.ThematicBreak:
		return append(out, r.styled(strings.Repeat("─", width), styleRule))
	case *ast.FencedCodeBlock:
		if lang := n.Language(r.src); len(lang) > 0 {
			out = append(out, codeIndent+r.styled(decode(lang), styleDim))
		}
		return r.codeLines(n, out)
	case *ast.CodeBlock:
		return r.codeLines(n, out)
	case *ast.Blockquote:
		return r.quote(n, width, out)
	case *ast.List:
		return r.list(n, width, out)
	case *ast.HTMLBlock:
		out = r.rawLines(n, styleDim, out)
		if n.HasClosure() {
			l := strings.TrimRight(string(n.ClosureLine.Value(r.src)), " \t\n")
			out = append(out, r.styled(l, styleDim))
		}
		return out
	case *east.Table:
		return r.table(n, width, out)
	}
	if n.HasChildren() {
		return r.children(n, width, out)
	}
	return r.rawLines(n, style{}, out)
}

// prose lays out an inline container as wrapped text.
func (r *renderer) prose(n ast.Node, st style, prefix []piece, width int, out []string) []string {
	ps := append(r.ps[:0], prefix...)
	ps = r.inlines(n, st, ps)
	if len(ps) == 0 {
		return out
	}
	out = wrap(ps, width, r.color, out)
	r.ps = ps[:0]
	return out
}

// codeLines prints code verbatim apart from the indent, so that it can be
// copied back out of the terminal. It is never wrapped: a wrapped line of
// code is a different program.
func (r *renderer) codeLines(n ast.Node, out []string) []string {
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		l := strings.TrimRight(string(seg.Value(r.src)), " \t\n")
		if l == "" {
			out = append(out, "")
			continue
		}
		out = append(out, codeIndent+r.styled(l, styleCodeBlock))
	}
	return out
}

// rawLines prints a block's source lines as they are, for HTML blocks and
// anything else that carries text but no structure we know.
func (r *renderer) rawLines(n ast.Node, st style, out []string) []string {
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		out = append(out, r.styled(strings.TrimRight(string(seg.Value(r.src)), " \t\n"), st))
	}
	return out
}

// quote draws a gutter beside the quoted blocks, which are rendered in the
// dim italic quote style so they read as someone else's words.
func (r *renderer) quote(n *ast.Blockquote, width int, out []string) []string {
	if r.depth >= maxDepth {
		return r.children(n, width, out)
	}
	saved := r.base
	r.base = r.base.with(styleQuote)
	r.depth++
	inner := r.children(n, max(width-2, minInner), nil)
	r.depth--
	r.base = saved
	bar := r.styled("│", styleRule)
	for _, l := range inner {
		if l == "" {
			out = append(out, bar)
		} else {
			out = append(out, bar+" "+l)
		}
	}
	return out
}

// list renders items behind a bullet or a right-aligned number, with
// continuation lines and nested blocks indented to the item's text.
func (r *renderer) list(l *ast.List, width int, out []string) []string {
	if r.depth >= maxDepth {
		for item := l.FirstChild(); item != nil; item = item.NextSibling() {
			out = r.children(item, width, out)
		}
		return out
	}
	r.depth++
	defer func() { r.depth-- }()
	ordered := l.IsOrdered()
	markW := 2 // "• "
	if ordered {
		markW = len(strconv.Itoa(l.Start+l.ChildCount()-1)) + 2 // "10. "
	}
	bullet := "•"
	if !r.color {
		bullet = "-"
	}
	pad := strings.Repeat(" ", markW)
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() && !l.IsTight {
			out = append(out, "")
		}
		mark := bullet
		if ordered {
			s := strconv.Itoa(num) + string(l.Marker)
			mark = pad[:max(markW-1-len(s), 0)] + s
			num++
		}
		lines := r.children(item, max(width-markW, minInner), nil)
		if len(lines) == 0 {
			out = append(out, r.styled(mark, styleDim))
			continue
		}
		out = append(out, r.styled(mark, styleDim)+" "+lines[0])
		for _, ln := range lines[1:] {
			if ln == "" {
				out = append(out, "")
			} else {
				out = append(out, pad+ln)
			}
		}
	}
	return out
}
