package report

import (
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/text"
)

// table lays out rows in columns padded to the widest cell, measured in
// terminal cells rather than bytes so paths and titles in any script stay
// aligned. The last column is never padded, which keeps lines free of
// trailing spaces.
type table struct {
	rows  [][]string
	right map[int]bool // columns aligned to the right (numbers)
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(b *strings.Builder, indent string) {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	for _, r := range t.rows {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range r {
			pad := widths[i] - runewidth.StringWidth(c)
			last := i == len(r)-1
			switch {
			case t.right[i]:
				line.WriteString(strings.Repeat(" ", pad) + c)
			case last:
				line.WriteString(c)
			default:
				line.WriteString(c + strings.Repeat(" ", pad))
			}
			if !last {
				line.WriteString("  ")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}

// thousands is eventwords', under the name this package has always used.
func thousands(n int64) string { return eventwords.Count(n) }

// money is eventwords', under the name this package has always used.
func money(c *float64) string { return eventwords.Money(c) }

// percent formats a rate in [0,1]; nil (nothing to measure) is a dash.
func percent(r *float64) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatFloat(*r*100, 'f', 1, 64) + "%"
}

// oneLine is eventwords', under the name this package has always used.
func oneLine(s string, n int) string { return eventwords.OneLine(s, n) }

// truncate cuts multi-line text at n runes, keeping line breaks, for
// excerpts in the markdown report.
func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if c := text.ClipRunes(s, n, ""); len(c) < len(s) {
		return strings.TrimSpace(c) + " " + text.Ellipsis
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// plural is view's (scripts/screen/view), under the name this package has always used.
