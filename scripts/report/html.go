package report

import (
	"sync"

	"github.com/ralph-dev/ralph/memory/text"

	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
)

// HTMLReportFile is the HTML report's name inside the session directory.
const HTMLReportFile = "report.html"

// HTMLReport writes one self-contained HTML file for session id: a
// timeline of its tasks and agents drawn in SVG, its tasks with what each
// cost, the insights and the errors. It loads nothing from anywhere (no
// scripts, fonts or images), so it opens the same offline, from a mail or
// an archive. Everything taken from the records — titles, commands, error
// messages, which the model wrote — is escaped by html/template. out is
// where to write it; "" puts it in the session's directory. It returns
// the path written.
func HTMLReport(fs afero.Fs, root, id, out string, now time.Time) (string, error) {
	rec, err := Load(fs, root, id)
	if err != nil {
		return "", err
	}
	page := newHTMLPage(rec, now)
	if l, err := memory.LoadLinks(fs, root, id); err == nil {
		page.Links = l.Lines()
	}
	var b bytes.Buffer
	if err := htmlTemplate().Execute(&b, page); err != nil {
		return "", fmt.Errorf("html report: %w", err)
	}
	if out == "" {
		out = filepath.Join(memory.SessionDir(root, id), HTMLReportFile)
	}
	if err := memory.WriteFileAtomic(fs, out, b.Bytes(), 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// htmlPage is what the template shows, laid out and formatted in Go so
// the template only places it.
type htmlPage struct {
	ID, Status, Mode, Model, Started, Duration, Cost, Tokens, Written string
	// Cache is the prompt cache's tokens and what caching saved, "" when
	// the endpoint reported none.
	Cache         string
	TaskLine      string
	Notes         []string
	Chart         svgChart
	Tasks         []htmlTask
	Insights      Insights
	Errors        []htmlRecord
	MoreErrors    int
	Decisions     []htmlDecision
	MoreDecisions int
	// Reviews are the tokens and time reviewing took, per task.
	Reviews []htmlReview
	// LeftOutPicks counts the routine task picks left out of a long list.
	LeftOutPicks int
	// Links are the sessions this one is linked to (links.json).
	Links []string
}

// htmlReview is one row of the reviews table.
type htmlReview struct {
	Task, Reviews, Tokens, Duration string
}

// htmlDecision is one row of the decisions table: what was decided
// (Text), by whom and about which task (Who), and why (Why: the reason,
// then confidence and alternatives when the one deciding gave them).
type htmlDecision struct {
	Time, Kind, Who, Text string
	Why                   []string
}

type htmlTask struct {
	// State is the task's state for the page's styles, StateWords as
	// people say it ("in progress").
	ID, Title, State, StateWords, Start, Duration, Tokens, Cost, Verify string
	Attempts, Commands, FailedCmds                                      int
	Files                                                               []string
	LastError                                                           string
}

type htmlRecord struct {
	Time, Kind, Text string
}

// svgChart is the timeline: one row per task (a bar from its first
// attempt's start to its last attempt's end, with a segment per attempt
// coloured by how it ended), then one row per agent.
type svgChart struct {
	Width, Height, LabelW, ChartW int
	Ticks                         []svgTick
	Tasks                         []svgRow
	AgentsY                       int // where the agents' heading goes; 0 for none
	Agents                        []svgRow
	Empty                         bool
}

type svgTick struct {
	X     float64
	Label string
}

type svgRow struct {
	ID, Label, Title string
	Y                int
	Bar              svgRect
	Segments         []svgRect
	// Name, When and Words are the row as the timeline's list says it
	// on a narrow screen, where the picture's labels would be too small
	// to read: the whole title, when it began ("+1m 5s") and how it went
	// ("done · 2 attempts · 1m 3s").
	Name, When, Words string
	// Outcome is how the row ended, for the list's colour: an attempt's
	// outcome, or "agent".
	Outcome string
}

type svgRect struct {
	X, W         float64
	Class, Title string
}

// Chart geometry, in SVG user units (the picture scales to the page).
const (
	svgWidth  = 1000
	svgLabelW = 290
	svgRowH   = 24
	svgTop    = 30
	svgBarH   = 14
)

func newHTMLPage(rec SessionRecords, now time.Time) htmlPage {
	a := rec.Analysis
	p := htmlPage{ID: a.SessionID, Status: eventwords.Status(a.Status), Mode: orDashStr(a.Mode), Model: orDashStr(a.Model),
		Duration: eventwords.Duration(a.Duration()), Cost: money(a.CostUSD),
		Tokens:  thousands(a.InputTokens) + " in / " + thousands(a.OutputTokens) + " out",
		Written: now.UTC().Format("2006-01-02 15:04 UTC"), Notes: a.Notes, Insights: ComputeInsights(rec), Cache: a.cacheLine()}
	p.Started = "-"
	if !a.StartedAt.IsZero() {
		p.Started = a.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	p.TaskLine = CountTasks(rec.Timeline).String()
	p.Chart = newChart(rec.Timeline)
	for _, t := range rec.Timeline.Tasks {
		h := htmlTask{ID: t.ID, Title: t.Title, State: t.State, StateWords: eventwords.TaskStatus(t.State), Attempts: len(t.Attempts), Start: clock(t.Start),
			Duration: eventwords.Duration(time.Duration(t.DurationMS) * time.Millisecond), Cost: money(t.CostUSD),
			Tokens: thousands(t.InputTokens + t.OutputTokens), Commands: t.Commands, FailedCmds: t.FailedCmds, Verify: verifyLine(t)}
		for _, f := range t.Files {
			h.Files = append(h.Files, fmt.Sprintf("%s +%d −%d", f.Path, f.Added, f.Deleted))
		}
		for _, at := range t.Attempts {
			if at.Error != "" {
				h.LastError = oneLine(at.Error, 300)
			}
		}
		p.Tasks = append(p.Tasks, h)
	}
	for i, e := range rec.Errors {
		if i == recordsLimit {
			p.MoreErrors = len(rec.Errors) - i
			break
		}
		kind := e.Kind
		if e.ToolName != "" {
			kind += " (" + e.ToolName + ")"
		}
		p.Errors = append(p.Errors, htmlRecord{Time: clock(e.Time), Kind: kind, Text: oneLine(e.Message, 500)})
	}
	for _, r := range a.Reviews {
		p.Reviews = append(p.Reviews, htmlReview{Task: orDashStr(r.Task), Reviews: strconv.Itoa(r.Reviews), Tokens: thousands(int64(r.Tokens)),
			Duration: eventwords.Duration(time.Duration(r.DurationMS) * time.Millisecond)})
	}
	skipRoutine := len(rec.Decision) > recordsLimit
	for _, d := range rec.Decision {
		switch {
		case skipRoutine && routine(d):
			p.LeftOutPicks++
			continue
		case len(p.Decisions) == recordsLimit:
			p.MoreDecisions++
			continue
		}
		who := d.Task
		if d.By != "" {
			who = strings.TrimSpace(who + " by " + d.By)
			if d.Agent != "" {
				who += " " + d.Agent
			}
		}
		p.Decisions = append(p.Decisions, htmlDecision{Time: clock(d.Time), Kind: d.Kind, Who: who, Text: oneLine(d.Detail, 500), Why: decisionWhy(d)})
	}
	return p
}

func verifyLine(t TaskTimeline) string {
	if len(t.Verify) == 0 {
		return "-"
	}
	ok := 0
	for _, v := range t.Verify {
		if v.OK {
			ok++
		}
	}
	return fmt.Sprintf("%d/%d passed", ok, len(t.Verify))
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("15:04:05")
}

// newChart lays the timeline out on a time axis from the session's first
// event to its last.
func newChart(tl Timeline) svgChart {
	c := svgChart{Width: svgWidth, LabelW: svgLabelW, ChartW: svgWidth - svgLabelW - 20}
	start, end := tl.Start, tl.End
	span := end.Sub(start)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) float64 {
		if t.IsZero() {
			t = start
		}
		return float64(svgLabelW) + float64(c.ChartW)*float64(t.Sub(start))/float64(span)
	}
	// A bar is at least 4 units wide, so an attempt of a few milliseconds
	// in a long session still shows.
	width := func(from, to time.Time) float64 { return max(4, x(to)-x(from)) }
	for i := 0; i <= 4; i++ {
		off := span * time.Duration(i) / 4
		c.Ticks = append(c.Ticks, svgTick{X: x(start.Add(off)), Label: "+" + eventwords.Duration(off)})
	}
	y := svgTop
	when := func(t time.Time) string {
		if t.IsZero() {
			return "+" + eventwords.Duration(0)
		}
		return "+" + eventwords.Duration(t.Sub(start))
	}
	for _, t := range tl.Tasks {
		took := eventwords.Duration(time.Duration(t.DurationMS) * time.Millisecond)
		row := svgRow{ID: t.ID, Y: y, Label: oneLine(t.ID+" "+t.Title, 44),
			Title: fmt.Sprintf("%s %s: %s, %s, %s", t.ID, oneLine(t.Title, 200), eventwords.TaskStatus(t.State),
				text.Counted(len(t.Attempts), "attempt", "attempts"), took),
			Name: oneLine(t.Title, 200), When: when(t.Start), Outcome: t.State,
			Words: eventwords.TaskStatus(t.State) + " · " + text.Counted(len(t.Attempts), "attempt", "attempts") + " · " + took}
		if n := len(t.Attempts); n > 0 {
			row.Outcome = t.Attempts[n-1].Outcome
		}
		if len(t.Attempts) > 0 {
			row.Bar = svgRect{X: x(t.Start), W: width(t.Start, t.End), Class: "bar"}
		} else {
			row.Bar = svgRect{X: x(start), W: 2, Class: "bar"}
		}
		for _, at := range t.Attempts {
			title := fmt.Sprintf("%s attempt %d: %s after %s", t.ID, at.Number, at.Outcome, eventwords.Duration(time.Duration(at.DurationMS)*time.Millisecond))
			if at.Agent != "" {
				title += " (" + at.Agent + ")"
			}
			if at.Error != "" {
				title += " — " + oneLine(at.Error, 200)
			}
			row.Segments = append(row.Segments, svgRect{X: x(at.Start), W: width(at.Start, at.End), Class: "attempt " + at.Outcome, Title: title})
		}
		c.Tasks = append(c.Tasks, row)
		y += svgRowH
	}
	if len(tl.Agents) > 0 {
		y += 10
		c.AgentsY = y
		y += 16
		for _, a := range tl.Agents {
			class := "agent"
			if a.Failed {
				class += " failed"
			}
			label := a.ID
			if a.Task != "" {
				label += " · " + a.Task
			}
			row := svgRow{ID: a.ID, Y: y, Label: oneLine(label, 44), Name: oneLine(label, 200), When: when(a.Start), Outcome: class,
				Words: eventwords.Duration(a.End.Sub(a.Start)) + " · " + money(a.CostUSD),
				Bar: svgRect{X: x(a.Start), W: width(a.Start, a.End), Class: class,
					Title: fmt.Sprintf("%s: %s, %s", label, eventwords.Duration(a.End.Sub(a.Start)), money(a.CostUSD))}}
			c.Agents = append(c.Agents, row)
			y += svgRowH
		}
	}
	c.Empty = len(tl.Tasks) == 0 && len(tl.Agents) == 0
	c.Height = y + 10
	return c
}

// htmlTemplate is parsed on first use: parsing it at package init cost
// every start of ralph, most of which never write a report.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"f1":    func(v float64) string { return fmt.Sprintf("%.1f", v) },
		"money": money,
		"dur":   func(ms int64) string { return eventwords.Duration(time.Duration(ms) * time.Millisecond) },
		"k":     thousands,
		"add":   func(a, b int) int { return a + b },
		"kinds": kindNames,
		"line":  func(s string) string { return oneLine(s, 200) },
		// state is a task's state as people say it ("in progress").
		"state":   eventwords.TaskStatus,
		"counted": text.Counted,
	}).Parse(htmlSource))
})
