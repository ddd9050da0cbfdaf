package render

// This file holds our own small versions of the GFM parser extensions.
// goldmark/extension compiles a dozen regular expressions and builds HTML
// attribute filters in its package init, about 0.7 ms at every start of
// ralph whether or not an answer is ever rendered. The parsers below
// produce the same AST nodes (from the init-free extension/ast package)
// with hand-written scanners instead.

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// strikethroughParser handles ~~text~~. Unlike GFM it ignores single
// tildes: model answers are full of "~5 ms … ~10 ms" approximations that
// would otherwise strike out everything between them.
type strikethroughParser struct{}

func (strikethroughParser) Trigger() []byte { return []byte{'~'} }

func (strikethroughParser) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, tildeDelimiter{})
	if d == nil || d.OriginalLength != 2 || before == '~' {
		return nil
	}
	d.Segment = segment.WithStop(segment.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pc.PushDelimiter(d)
	return d
}

func (strikethroughParser) CloseBlock(ast.Node, parser.Context) {}

type tildeDelimiter struct{}

func (tildeDelimiter) IsDelimiter(b byte) bool { return b == '~' }

func (tildeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char && opener.Length == closer.Length
}

func (tildeDelimiter) OnMatch(int) ast.Node { return east.NewStrikethrough() }

// taskParser turns a leading "[ ]" or "[x]" in a list item into a
// TaskCheckBox node. It runs before the link parser, which would
// otherwise read the brackets as a link label.
type taskParser struct{}

func (taskParser) Trigger() []byte { return []byte{'['} }

func (taskParser) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	item, ok := parent.Parent().(*ast.ListItem)
	if !ok || item.FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 3 || line[0] != '[' || line[2] != ']' {
		return nil
	}
	mark := line[1]
	if mark != ' ' && mark != 'x' && mark != 'X' {
		return nil
	}
	n := 3
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	if n == 3 && n < len(line) && line[n] != '\n' && line[n] != '\r' {
		return nil // "[x]foo" is text, not a task
	}
	block.Advance(n)
	return east.NewTaskCheckBox(mark != ' ')
}

func (taskParser) CloseBlock(ast.Node, parser.Context) {}

// tableTransformer turns a paragraph whose second line is a delimiter row
// such as "|---|:--:|" into a GFM table, following goldmark's extension.
type tableTransformer struct{}

func (tableTransformer) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		aligns := parseDelimiterRow(seg.Value(reader.Source()))
		if aligns == nil {
			continue
		}
		header := parseRow(lines.At(i-1), aligns, true, reader.Source())
		if header == nil || header.ChildCount() != len(aligns) {
			return
		}
		table := east.NewTable()
		table.Alignments = aligns
		table.AppendChild(table, east.NewTableHeader(header))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, parseRow(lines.At(j), aligns, false, reader.Source()))
		}
		lines.SetSliced(0, i-1)
		node.Parent().InsertAfter(node.Parent(), node, table)
		if lines.Len() == 0 {
			node.Parent().RemoveChild(node.Parent(), node)
		} else {
			last := lines.At(i - 2)
			last.Stop-- // the paragraph's final newline belongs to the table now
			lines.Set(i-2, last)
		}
		return
	}
}

// parseRow splits one table line into cells at unescaped pipes. Cells are
// inline-parsed later like any block with lines; an escaped pipe inside a
// code span is unescaped by the renderer.
func parseRow(seg text.Segment, aligns []east.Alignment, header bool, src []byte) *east.TableRow {
	seg = seg.TrimLeftSpace(src)
	seg = seg.TrimRightSpace(src)
	line := seg.Value(src)
	pos, limit := 0, len(line)
	if limit > 0 && line[0] == '|' {
		pos++
	}
	if limit > pos && line[limit-1] == '|' && (limit < 2 || line[limit-2] != '\\') {
		limit--
	}
	row := east.NewTableRow(aligns)
	for i := 0; pos < limit; i++ {
		align := east.AlignNone
		if i < len(aligns) {
			align = aligns[i]
		} else if !header {
			return row // GFM drops cells beyond the header's
		}
		end := pos
		for end < limit && (line[end] != '|' || end > 0 && line[end-1] == '\\') {
			end++
		}
		cell := east.NewTableCell()
		cell.Alignment = align
		cs := text.NewSegment(seg.Start+pos, seg.Start+end)
		cs = cs.TrimLeftSpace(src)
		cell.Lines().Append(cs.TrimRightSpace(src))
		row.AppendChild(row, cell)
		pos = end + 1
	}
	// Unlike goldmark's extension we do not pad short rows with empty
	// cells: the renderer copes, and padding lets a short input with a
	// thousand-column delimiter row build a million nodes.
	return row
}

// parseDelimiterRow returns the column alignments of a delimiter row, or
// nil if line is not one.
func parseDelimiterRow(line []byte) []east.Alignment {
	if w, _ := util.IndentWidth(line, 0); w > 3 {
		return nil
	}
	// Requiring a pipe keeps a line like ":--" under a sentence from
	// turning the sentence into a one-column table.
	if bytes.IndexByte(line, '-') < 0 || bytes.IndexByte(line, '|') < 0 {
		return nil
	}
	cols := bytes.Split(line, []byte{'|'})
	if util.IsBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}
	if len(cols) == 0 {
		return nil
	}
	aligns := make([]east.Alignment, 0, len(cols))
	for _, c := range cols {
		c = util.TrimLeftSpace(util.TrimRightSpace(c))
		left := len(c) > 0 && c[0] == ':'
		right := len(c) > 1 && c[len(c)-1] == ':'
		body := c
		if left {
			body = body[1:]
		}
		if right {
			body = body[:len(body)-1]
		}
		if len(body) == 0 || len(bytes.Trim(body, "-")) != 0 {
			return nil
		}
		switch {
		case left && right:
			aligns = append(aligns, east.AlignCenter)
		case left:
			aligns = append(aligns, east.AlignLeft)
		case right:
			aligns = append(aligns, east.AlignRight)
		default:
			aligns = append(aligns, east.AlignNone)
		}
	}
	return aligns
}
