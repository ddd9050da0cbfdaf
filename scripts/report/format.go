package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
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

// relTime says how long ago t was in the words people use at a glance;
// beyond a month a date is clearer than a count of days. A time slightly in
// the future (clock skew between machines) reads as "just now".
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 2*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
	return t.Local().Format("2006-01-02")
}

// humanDuration rounds a duration to the precision a person cares about:
// milliseconds for short things, seconds for minutes, minutes for hours.
func humanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// thousands writes an integer with comma separators, because token counts
// run to millions and unseparated digits are hard to compare by eye.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// money formats a cost; unknown is said in words rather than as $0, which
// would claim the run was free.
func money(c *float64) string {
	if c == nil {
		return "unknown"
	}
	if *c != 0 && math.Abs(*c) < 0.01 {
		return fmt.Sprintf("$%.4f", *c)
	}
	return fmt.Sprintf("$%.2f", *c)
}

// percent formats a rate in [0,1]; nil (nothing to measure) is a dash.
func percent(r *float64) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatFloat(*r*100, 'f', 1, 64) + "%"
}

// oneLine flattens text to a single line and cuts it at n cells, so a log
// line or table cell never breaks the layout around it.
func oneLine(s string, n int) string {
	// The records hold the model's words: what a terminal would act on
	// goes, whether the line ends up on one or in a file opened later.
	return text.ClipWidth(strings.Join(strings.Fields(text.StripControls(s)), " "), n)
}

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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
