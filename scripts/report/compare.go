package report

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Comparison sets two sessions side by side. Deltas are B minus A, and
// ratios B over A, so "B took 1.5x the tokens of A" reads off directly.
type Comparison struct {
	A      Analysis `json:"a"`
	B      Analysis `json:"b"`
	Deltas Deltas   `json:"deltas"`
}

// Deltas holds one Delta per compared metric, under stable names a script
// can pick out (.deltas.turns.ratio).
type Deltas struct {
	DurationMS      Delta `json:"duration_ms"`
	Turns           Delta `json:"turns"`
	InputTokens     Delta `json:"input_tokens"`
	OutputTokens    Delta `json:"output_tokens"`
	CostUSD         Delta `json:"cost_usd"`
	ToolCalls       Delta `json:"tool_calls"`
	Errors          Delta `json:"errors"`
	Retries         Delta `json:"retries"`
	ToolSuccessRate Delta `json:"tool_success_rate"`
	TaskSuccessRate Delta `json:"task_success_rate"`
}

// Delta compares one metric. A value is null when that session does not
// know it (cost without a price, success rate without tool calls); the
// delta is null when either side is, and the ratio also when A is zero.
type Delta struct {
	A     *float64 `json:"a"`
	B     *float64 `json:"b"`
	Diff  *float64 `json:"delta"`
	Ratio *float64 `json:"ratio"`
}

func delta(a, b *float64) Delta {
	d := Delta{A: a, B: b}
	if a != nil && b != nil {
		d.Diff = ptr(*b - *a)
		if *a != 0 {
			d.Ratio = ptr(*b / *a)
		}
	}
	return d
}

func num[T int | int64](v T) *float64 { return ptr(float64(v)) }

func taskRate(a Analysis) *float64 {
	if a.Tasks == nil {
		return nil
	}
	return a.Tasks.SuccessRate
}

// Compare computes the deltas between two analyses.
func Compare(a, b Analysis) Comparison {
	return Comparison{A: a, B: b, Deltas: Deltas{
		DurationMS:      delta(num(a.DurationMS), num(b.DurationMS)),
		Turns:           delta(num(a.Turns), num(b.Turns)),
		InputTokens:     delta(num(a.InputTokens), num(b.InputTokens)),
		OutputTokens:    delta(num(a.OutputTokens), num(b.OutputTokens)),
		CostUSD:         delta(a.CostUSD, b.CostUSD),
		ToolCalls:       delta(num(a.ToolCalls), num(b.ToolCalls)),
		Errors:          delta(num(a.Errors), num(b.Errors)),
		Retries:         delta(num(a.Retries), num(b.Retries)),
		ToolSuccessRate: delta(a.ToolSuccessRate, b.ToolSuccessRate),
		TaskSuccessRate: delta(taskRate(a), taskRate(b)),
	}}
}

// Text is the comparison as a table: metric, A, B, the change and the
// ratio, numbers right-aligned. Rates change in percentage points, for
// which a ratio would mislead, so theirs is left out.
func (c Comparison) Text() string {
	t := table{right: map[int]bool{1: true, 2: true, 3: true, 4: true}}
	t.add("", "A", "B", "change", "ratio")
	t.add("session", c.A.SessionID, c.B.SessionID, "", "")
	t.add("status", c.A.Status, c.B.Status, "", "")
	d := c.Deltas
	row := func(name string, x Delta, f func(float64) string, signed func(float64) string, ratio bool) {
		cells := []string{name, orDash(x.A, f), orDash(x.B, f), orDash(x.Diff, signed), "-"}
		if name == "cost" {
			// An unknown price is not a missing number but a fact to state.
			cells[1], cells[2] = money(x.A), money(x.B)
		}
		if ratio && x.Ratio != nil {
			cells[4] = strconv.FormatFloat(*x.Ratio, 'f', 2, 64) + "x"
		}
		t.add(cells...)
	}
	dur := func(v float64) string { return humanDuration(time.Duration(v) * time.Millisecond) }
	count := func(v float64) string { return thousands(int64(math.Round(v))) }
	usd := func(v float64) string { return money(&v) }
	pct := func(v float64) string { return percent(&v) }
	row("duration", d.DurationMS, dur, signedWith(dur), true)
	row("turns", d.Turns, count, signedWith(count), true)
	row("input tokens", d.InputTokens, count, signedWith(count), true)
	row("output tokens", d.OutputTokens, count, signedWith(count), true)
	row("cost", d.CostUSD, usd, signedWith(usd), true)
	row("tool calls", d.ToolCalls, count, signedWith(count), true)
	row("errors", d.Errors, count, signedWith(count), true)
	row("retries", d.Retries, count, signedWith(count), true)
	points := func(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + " pp" }
	row("tool success", d.ToolSuccessRate, pct, signedWith(points), false)
	if d.TaskSuccessRate.A != nil || d.TaskSuccessRate.B != nil {
		row("task success", d.TaskSuccessRate, pct, signedWith(points), false)
	}
	var b strings.Builder
	t.write(&b, "")
	return b.String()
}

func orDash(v *float64, f func(float64) string) string {
	if v == nil {
		return "-"
	}
	return f(*v)
}

// signedWith formats a change with its sign, so growth and shrinkage are
// told apart at a glance; no change is a plain 0 in the metric's unit.
func signedWith(f func(float64) string) func(float64) string {
	return func(v float64) string {
		switch {
		case v > 0:
			return "+" + f(v)
		case v < 0:
			return "-" + f(-v)
		}
		return f(0)
	}
}
