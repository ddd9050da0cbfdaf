package report

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
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
	dur := func(v float64) string { return eventwords.Duration(time.Duration(v) * time.Millisecond) }
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

// SessionsComparison sets any number of sessions side by side, oldest or
// first named first. Metrics hold one value per session and the change of
// the last against the first. For exactly two sessions it also carries
// the two-session comparison (a, b, deltas) that `ralph compare A B`
// always printed, so scripts reading .deltas keep working.
type SessionsComparison struct {
	Sessions []ComparedSession `json:"sessions"`
	Metrics  []MetricRow       `json:"metrics"`
	*Comparison
}

// ComparedSession is one compared session and the project it belongs to.
type ComparedSession struct {
	Project string `json:"project"`
	Analysis
}

// MetricRow is one metric across the compared sessions; a value is null
// where that session does not know it. Change and Ratio compare the last
// session with the first.
type MetricRow struct {
	Name   string     `json:"name"`
	Values []*float64 `json:"values"`
	Change *float64   `json:"change"`
	Ratio  *float64   `json:"ratio"`
}

// CompareSessions compares the sessions in the order given.
func CompareSessions(ss []ComparedSession) SessionsComparison {
	c := SessionsComparison{Sessions: ss, Metrics: []MetricRow{}}
	if len(ss) == 2 {
		two := Compare(ss[0].Analysis, ss[1].Analysis)
		c.Comparison = &two
	}
	for _, m := range []struct {
		name string
		get  func(Analysis) *float64
	}{
		{"duration_ms", func(a Analysis) *float64 { return num(a.DurationMS) }},
		{"turns", func(a Analysis) *float64 { return num(a.Turns) }},
		{"input_tokens", func(a Analysis) *float64 { return num(a.InputTokens) }},
		{"output_tokens", func(a Analysis) *float64 { return num(a.OutputTokens) }},
		{"cost_usd", func(a Analysis) *float64 { return a.CostUSD }},
		{"tool_calls", func(a Analysis) *float64 { return num(a.ToolCalls) }},
		{"errors", func(a Analysis) *float64 { return num(a.Errors) }},
		{"retries", func(a Analysis) *float64 { return num(a.Retries) }},
		{"tool_success_rate", func(a Analysis) *float64 { return a.ToolSuccessRate }},
		{"task_success_rate", taskRate},
		{"tasks_done", func(a Analysis) *float64 {
			if a.Tasks == nil {
				return nil
			}
			return num(a.Tasks.Done)
		}},
	} {
		row := MetricRow{Name: m.name}
		for _, s := range ss {
			row.Values = append(row.Values, m.get(s.Analysis))
		}
		if len(row.Values) > 1 {
			d := delta(row.Values[0], row.Values[len(row.Values)-1])
			row.Change, row.Ratio = d.Diff, d.Ratio
		}
		c.Metrics = append(c.Metrics, row)
	}
	return c
}

// Text is two sessions as Comparison.Text lays them out, and more as a
// table with a column per session and the change from the first to the
// last.
func (c SessionsComparison) Text() string {
	if c.Comparison != nil {
		return c.Comparison.Text()
	}
	t := table{right: map[int]bool{}}
	head := []string{""}
	projects := map[string]bool{}
	for i, s := range c.Sessions {
		t.right[i+1] = true
		head = append(head, shortID(s.SessionID))
		projects[s.Project] = true
	}
	n := len(c.Sessions)
	t.right[n+1], t.right[n+2] = true, true
	t.add(append(head, "change", "ratio")...)
	row := func(name string, cells ...string) { t.add(append([]string{name}, cells...)...) }
	if len(projects) > 1 {
		var cells []string
		for _, s := range c.Sessions {
			cells = append(cells, filepath.Base(s.Project))
		}
		row("project", cells...)
	}
	var started, status []string
	for _, s := range c.Sessions {
		started = append(started, s.StartedAt.Local().Format("01-02 15:04"))
		status = append(status, s.Status)
	}
	row("started", started...)
	row("status", status...)
	dur := func(v float64) string { return eventwords.Duration(time.Duration(v) * time.Millisecond) }
	count := func(v float64) string { return thousands(int64(math.Round(v))) }
	usd := func(v float64) string { return money(&v) }
	pct := func(v float64) string { return percent(&v) }
	points := func(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + " pp" }
	labels := map[string]struct {
		label        string
		value, delta func(float64) string
		ratio        bool
	}{
		"duration_ms": {"duration", dur, dur, true}, "turns": {"turns", count, count, true},
		"input_tokens": {"input tokens", count, count, true}, "output_tokens": {"output tokens", count, count, true},
		"cost_usd": {"cost", usd, usd, true}, "tool_calls": {"tool calls", count, count, true},
		"errors": {"errors", count, count, true}, "retries": {"retries", count, count, true},
		"tool_success_rate": {"tool success", pct, points, false}, "task_success_rate": {"task success", pct, points, false},
		"tasks_done": {"tasks done", count, count, true},
	}
	for _, m := range c.Metrics {
		l := labels[m.Name]
		known := false
		var cells []string
		for _, v := range m.Values {
			known = known || v != nil
			cells = append(cells, orDash(v, l.value))
		}
		if !known && (m.Name == "task_success_rate" || m.Name == "tasks_done") {
			continue
		}
		if m.Name == "cost_usd" {
			for i, v := range m.Values {
				cells[i] = money(v)
			}
		}
		ratio := "-"
		if l.ratio && m.Ratio != nil {
			ratio = strconv.FormatFloat(*m.Ratio, 'f', 2, 64) + "x"
		}
		row(l.label, append(cells, orDash(m.Change, signedWith(l.delta)), ratio)...)
	}
	var b strings.Builder
	t.write(&b, "")
	return b.String()
}
