package render

import (
	"strings"

	east "github.com/yuin/goldmark/extension/ast"
)

// sepWidth is the width of " │ " between columns. The table has no outer
// border so that it costs as few columns as possible in a narrow terminal.
const sepWidth = 3

// minColumn is the narrowest a column may get before the table is shown
// as rows of text instead: below it cells would wrap a letter per line.
const minColumn = 3

// table lays a GFM table out in aligned columns. When the natural widths
// do not fit, the widest columns are narrowed first and their cells
// wrapped onto several lines, so no cell text is lost to truncation.
func (r *renderer) table(t *east.Table, width int, out []string) []string {
	ncol := len(t.Alignments)
	if ncol == 0 {
		return out
	}
	if ncol*minColumn+sepWidth*(ncol-1) > width {
		return r.tableAsText(t, width, out)
	}
	var rows [][][]piece
	natural := make([]int, ncol)
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		st := r.base
		if _, ok := row.(*east.TableHeader); ok {
			st = st.with(styleTableHead)
		}
		cells := make([][]piece, ncol)
		i := 0
		for c := row.FirstChild(); c != nil && i < ncol; c = c.NextSibling() {
			r.inCell = true
			cells[i] = r.inlines(c, st, nil)
			r.inCell = false
			natural[i] = max(natural[i], longestLine(cells[i]))
			i++
		}
		rows = append(rows, cells)
	}
	colW := fitColumns(natural, width-sepWidth*(ncol-1))

	rule := make([]string, ncol)
	for i, w := range colW {
		rule[i] = strings.Repeat("─", w)
	}
	ruleLine := r.styled(strings.Join(rule, "─┼─"), styleRule)
	sep := r.styled("│", styleRule)

	// Wrap every cell first: only then do we know whether any body row
	// spans several lines and therefore needs rules between rows.
	wrapped := make([][][]string, len(rows))
	multi := false
	for ri, cells := range rows {
		wrapped[ri] = make([][]string, ncol)
		for i, ps := range cells {
			wrapped[ri][i] = wrap(ps, colW[i], r.color, nil)
			if ri > 0 && len(wrapped[ri][i]) > 1 {
				multi = true
			}
		}
	}
	for ri, cells := range wrapped {
		if ri == 1 || ri > 1 && multi {
			out = append(out, ruleLine)
		}
		out = r.tableRow(cells, colW, t.Alignments, sep, out)
	}
	return out
}

// tableAsText renders a table too wide to lay out as one wrapped line of
// text per row, with the cells separated by pipes as in the source.
func (r *renderer) tableAsText(t *east.Table, width int, out []string) []string {
	bar := piece{text: "|", w: 1, st: styleRule}
	gap := piece{text: " ", w: 1, space: true}
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		st := r.base
		if _, ok := row.(*east.TableHeader); ok {
			st = st.with(styleTableHead)
		}
		var ps []piece
		r.inCell = true
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			if c != row.FirstChild() {
				ps = append(ps, gap, bar, gap)
			}
			ps = r.inlines(c, st, ps)
		}
		r.inCell = false
		out = wrap(ps, width, r.color, out)
	}
	return out
}

// tableRow emits one table row, which is as many lines as its tallest cell.
func (r *renderer) tableRow(cells [][]string, colW []int, aligns []east.Alignment, sep string, out []string) []string {
	height := 1
	for _, c := range cells {
		height = max(height, len(c))
	}
	var b strings.Builder
	for k := 0; k < height; k++ {
		b.Reset()
		for i, c := range cells {
			if i > 0 {
				b.WriteString(" ")
				b.WriteString(sep)
				b.WriteString(" ")
			}
			s := ""
			if k < len(c) {
				s = c[k]
			}
			gap := max(colW[i]-visibleWidth(s), 0)
			left := 0
			switch aligns[i] {
			case east.AlignRight:
				left = gap
			case east.AlignCenter:
				left = gap / 2
			}
			b.WriteString(strings.Repeat(" ", left))
			b.WriteString(s)
			b.WriteString(strings.Repeat(" ", gap-left))
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// fitColumns shrinks column widths to fit avail columns in total. It finds
// the largest cap that fits, so narrow columns keep their natural width
// and only the wide ones are wrapped, then hands the remainder back to
// the capped columns from left to right.
func fitColumns(natural []int, avail int) []int {
	w := make([]int, len(natural))
	total := 0
	for i, n := range natural {
		w[i] = max(n, 1)
		total += w[i]
	}
	if total <= avail {
		return w
	}
	sum := func(c int) int {
		s := 0
		for _, n := range w {
			s += min(n, c)
		}
		return s
	}
	lo, hi := 1, 1
	for _, n := range w {
		hi = max(hi, n)
	}
	for lo < hi { // largest c in [1, hi] with sum(c) <= avail
		mid := (lo + hi + 1) / 2
		if sum(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	left := avail - sum(lo)
	for i, n := range w {
		w[i] = min(n, lo)
		if n > lo && left > 0 {
			w[i]++
			left--
		}
	}
	return w
}

// longestLine is the width a cell needs to fit without wrapping.
func longestLine(ps []piece) int {
	longest, cur := 0, 0
	for _, p := range ps {
		if p.brk {
			cur = 0
			continue
		}
		cur += p.w
		longest = max(longest, cur)
	}
	return longest
}

// visibleWidth measures a rendered line, skipping the SGR sequences we
// emitted ourselves; the input was sanitised, so there are no others.
func visibleWidth(s string) int {
	if strings.IndexByte(s, '\x1b') < 0 {
		return textWidth(s)
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '\x1b')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			break
		}
		s = s[i+j+1:]
	}
	return textWidth(b.String())
}
