package render

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	gtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// htmlAsText turns raw HTML into plain text before glamour sees it.
//
// Glamour passes inline HTML and HTML blocks through a strict HTML
// sanitiser that drops every tag, so an answer's "Vec<u8>" or
// "List<String>" (which goldmark reads as tags) vanished from the screen,
// and "a<c and x>y" lost everything between the brackets. A terminal
// cannot draw HTML anyway, so the source is shown as the model wrote it:
// inline HTML becomes text in its paragraph, an HTML block a code block
// of its lines. The text is already free of the model's control
// characters (see Markdown), so showing it as written is safe.
type htmlAsText struct{}

// htmlTransformerPriority runs the rewrite after goldmark's own
// transformers; the order among them does not matter to it.
const htmlTransformerPriority = 100

var htmlParserOption = parser.WithASTTransformers(util.Prioritized(htmlAsText{}, htmlTransformerPriority))

func (htmlAsText) Transform(doc *ast.Document, _ gtext.Reader, _ parser.Context) {
	var raws []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && (n.Kind() == ast.KindRawHTML || n.Kind() == ast.KindHTMLBlock) {
			raws = append(raws, n)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	// Nodes are replaced after the walk, which must not see the tree
	// change under it.
	for _, n := range raws {
		switch n := n.(type) {
		case *ast.RawHTML:
			replaceInline(n, n.Segments)
		case *ast.HTMLBlock:
			replaceBlock(n)
		}
	}
}

// replaceInline puts text nodes of the raw HTML's source where it was.
// Inline HTML spans lines only at a soft line break, which each segment
// but the last ends with.
func replaceInline(n *ast.RawHTML, segs *gtext.Segments) {
	parent := n.Parent()
	for i := 0; i < segs.Len(); i++ {
		t := ast.NewTextSegment(segs.At(i))
		parent.InsertBefore(parent, n, t)
	}
	parent.RemoveChild(parent, n)
}

// replaceBlock puts a code block of the HTML block's lines where it was:
// a paragraph would have its lines joined, and the block is source text.
func replaceBlock(n *ast.HTMLBlock) {
	c := ast.NewCodeBlock()
	lines := gtext.NewSegments()
	for i := 0; i < n.Lines().Len(); i++ {
		lines.Append(n.Lines().At(i))
	}
	if n.HasClosure() {
		lines.Append(n.ClosureLine)
	}
	c.SetLines(lines)
	parent := n.Parent()
	parent.ReplaceChild(parent, n, c)
}
