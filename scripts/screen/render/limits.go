package render

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Glamour's time grows faster than its input: with the number of blocks
// (1,000 one-word paragraphs take 0.27 s, 5,000 take 1.5 s), with nesting (each level
// re-renders what it holds; 2,000 nested quotes did not finish in ten
// minutes), with table cells (a 500 × 500 table takes 2.5 s) and with the
// length of a word it has to wrap (one of 6,000 characters takes 0.33 s;
// code blocks are not wrapped and cost nothing of the kind). A model
// can write any of these, and the person would wait for it, so a document
// beyond these bounds is shown as it is instead. Typical answers are far
// below them: a few KB, tens of blocks, three or four levels, small tables.
const (
	maxBytes   = 128 << 10
	maxBlocks  = 600
	maxDepth   = 16
	maxCells   = 5000
	maxWord    = 2000
	maxColumns = 100
)

// tooCostly parses src (goldmark's parser is linear) and reports whether
// rendering it with glamour could take long.
func tooCostly(src string) bool {
	if len(src) > maxBytes || manyColumns(src) {
		return true
	}
	p := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser()
	doc := p.Parse(text.NewReader([]byte(src)))
	blocks, cells := 0, 0
	over := false
	var walk func(n ast.Node, depth int)
	walk = func(n ast.Node, depth int) {
		if over {
			return
		}
		switch n.Kind() {
		case extast.KindTable:
			cols := len(n.(*extast.Table).Alignments)
			for r := n.FirstChild(); r != nil; r = r.NextSibling() {
				cells += max(cols, r.ChildCount())
			}
			if cells > maxCells {
				over = true
			}
			return
		case ast.KindBlockquote, ast.KindListItem:
			depth++
		}
		if n.Type() == ast.TypeBlock {
			blocks++
			if wraps(n) && longestWord(n.Lines(), src) > maxWord {
				over = true
				return
			}
		}
		if blocks > maxBlocks || cells > maxCells || depth > maxDepth {
			over = true
			return
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			walk(c, depth)
		}
	}
	walk(doc, 0)
	return over
}

// wraps reports whether glamour wraps the text of block n: everything but
// code and HTML.
func wraps(n ast.Node) bool {
	switch n.Kind() {
	case ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock:
		return false
	}
	return true
}

// longestWord is the length in bytes of the longest run without a space
// in the lines of a block.
func longestWord(lines *text.Segments, src string) int {
	longest := 0
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		run := 0
		for _, c := range []byte(src[seg.Start:seg.Stop]) {
			if c == ' ' || c == '\n' {
				run = 0
				continue
			}
			run++
			longest = max(longest, run)
		}
	}
	return longest
}

// manyColumns reports whether a line of src could be the delimiter row of
// a table with more than maxColumns columns. goldmark pads every row of a
// table to the delimiter row's columns, so "a", a delimiter row of 3,000
// columns and 3,000 lines of "x" cost it 1.3 GB; this is checked before
// parsing.
func manyColumns(src string) bool {
	pipes := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '|':
			if pipes++; pipes > maxColumns {
				return true
			}
		case '\n':
			pipes = 0
		}
	}
	return false
}
