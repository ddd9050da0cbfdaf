package report

import (
	"sync"

	"github.com/ralph-dev/ralph/memory/text"

	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
)

// Insights are the answers people look for after a long run: where the
// time went, what had to be retried, which commands keep failing, which
// errors keep coming back, and what each task and agent cost. They cover
// one session or several (ralph insights --last 5).
type Insights struct {
	Sessions        []string       `json:"sessions"`
	Slowest         []TaskFigure   `json:"slowest_tasks"`
	MostRetried     []TaskFigure   `json:"most_retried_tasks"`
	FailingCommands []CommandStat  `json:"failing_commands"`
	ErrorPatterns   []ErrorPattern `json:"error_patterns"`
	CostByTask      []TaskFigure   `json:"cost_by_task"`
	CostByAgent     []AgentFigure  `json:"cost_by_agent"`
}

// TaskFigure is one task in an insight list.
type TaskFigure struct {
	Session      string   `json:"session"`
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	State        string   `json:"state"`
	Attempts     int      `json:"attempts"`
	DurationMS   int64    `json:"duration_ms"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd"`
}

// AgentFigure is what one agent spent. The coordinator itself is "main".
type AgentFigure struct {
	Session      string   `json:"session"`
	Agent        string   `json:"agent"`
	Task         string   `json:"task,omitempty"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd"`
}

// CommandStat is one command's runs and failures, and how the last
// failure ended.
type CommandStat struct {
	Command     string `json:"command"`
	Runs        int    `json:"runs"`
	Failures    int    `json:"failures"`
	LastFailure string `json:"last_failure,omitempty"`
}

// ErrorPattern is a group of errors alike but for numbers, paths and hex
// ids: "t<n>: verification failed: <path>:<n>: undefined: x" covers the
// same failure in any task, file or line.
type ErrorPattern struct {
	Pattern string         `json:"pattern"`
	Count   int            `json:"count"`
	Kinds   map[string]int `json:"kinds"`
	Example string         `json:"example"`
	First   time.Time      `json:"first,omitzero"`
	Last    time.Time      `json:"last,omitzero"`
}

// insightLimit is how many entries each insight list keeps.
const insightLimit = 10

// SessionRecords is what one session's records say, read once for every
// view of them: its analysis, events, timeline and errors.
type SessionRecords struct {
	Analysis Analysis
	State    memory.State
	Events   []event.Event
	Timeline Timeline
	Errors   []memory.ErrorRecord
	Decision []memory.DecisionRecord
}

// Load reads a session's records.
func Load(fs afero.Fs, root, id string) (SessionRecords, error) {
	a, got, err := analyze(fs, root, id)
	if err != nil {
		return SessionRecords{}, err
	}
	r, err := recordsWith(fs, root, id, got)
	r.Analysis = a
	return r, err
}

// RecordsOf is what Load reads but the analysis, from the session's
// events already read (ralph serve's session page, which shows them).
func RecordsOf(fs afero.Fs, root, id string, evs []event.Event) (SessionRecords, error) {
	decs, _, err := memory.ReadJSONL[memory.DecisionRecord](fs, memory.LogPath(root, id, memory.DecisionsLog))
	if err != nil {
		return SessionRecords{}, err
	}
	st, _ := memory.LoadSessionState(fs, root, id)
	return recordsWith(fs, root, id, analyzed{evs: evs, decs: decs, state: st, timeline: BuildTimeline(evs, st)})
}

// recordsWith completes a session's records from its events, decisions
// and timeline.
func recordsWith(fs afero.Fs, root, id string, got analyzed) (SessionRecords, error) {
	errs, _, err := memory.ReadJSONL[memory.ErrorRecord](fs, memory.LogPath(root, id, memory.ErrorsLog))
	if err != nil {
		return SessionRecords{}, err
	}
	if len(errs) == 0 {
		errs = errorsFromEvents(got.evs)
	}
	return SessionRecords{State: got.state, Events: got.evs, Timeline: got.timeline, Errors: errs, Decision: got.decs}, nil
}

// errorsFromEvents stands in for errors.jsonl in sessions recorded before
// it existed.
func errorsFromEvents(evs []event.Event) []memory.ErrorRecord {
	var out []memory.ErrorRecord
	for _, e := range evs {
		switch {
		case e.Type == event.ToolResult && e.IsError:
			out = append(out, memory.ErrorRecord{Time: e.Time, Kind: "tool", Turn: e.Turn, ToolName: e.ToolName, Message: e.Output})
		case e.Type == event.Retry:
			l, _ := eventwords.EventLine(e)
			out = append(out, memory.ErrorRecord{Time: e.Time, Kind: "retry", Turn: e.Turn, Message: l.Text})
		case e.Type == event.Error:
			out = append(out, memory.ErrorRecord{Time: e.Time, Kind: "model", Turn: e.Turn, Message: e.Text})
		}
	}
	return out
}

// ComputeInsights sums up one or more sessions' records.
func ComputeInsights(sessions ...SessionRecords) Insights {
	in := Insights{Sessions: []string{}, Slowest: []TaskFigure{}, MostRetried: []TaskFigure{}, FailingCommands: []CommandStat{},
		ErrorPatterns: []ErrorPattern{}, CostByTask: []TaskFigure{}, CostByAgent: []AgentFigure{}}
	var tasks []TaskFigure
	cmds := map[string]*CommandStat{}
	var cmdOrder []string
	patterns := map[string]*ErrorPattern{}
	for _, s := range sessions {
		id := s.Analysis.SessionID
		in.Sessions = append(in.Sessions, id)
		for _, t := range s.Timeline.Tasks {
			tasks = append(tasks, TaskFigure{Session: id, ID: t.ID, Title: t.Title, State: t.State, Attempts: len(t.Attempts),
				DurationMS: t.DurationMS, InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CostUSD: t.CostUSD})
		}
		for _, c := range s.Timeline.Commands {
			key := text.OneLine(c.Command)
			st := cmds[key]
			if st == nil {
				st = &CommandStat{Command: key}
				cmds[key] = st
				cmdOrder = append(cmdOrder, key)
			}
			st.Runs++
			if c.Failed {
				st.Failures++
				st.LastFailure = lastLine(c.Output)
			}
		}
		for _, e := range s.Errors {
			key := ErrorKey(e.Message)
			p := patterns[key]
			if p == nil {
				p = &ErrorPattern{Pattern: key, Kinds: map[string]int{}, Example: oneLine(e.Message, 300), First: e.Time}
				patterns[key] = p
			}
			p.Count++
			p.Kinds[cmp.Or(e.Kind, "error")]++
			if e.Time.After(p.Last) {
				p.Last = e.Time
			}
		}
		in.CostByAgent = append(in.CostByAgent, agentCosts(s)...)
	}
	in.Slowest = topTasks(tasks, func(t TaskFigure) bool { return t.Attempts > 0 }, func(x, y TaskFigure) int {
		return cmp.Compare(y.DurationMS, x.DurationMS)
	})
	in.MostRetried = topTasks(tasks, func(t TaskFigure) bool { return t.Attempts > 1 }, func(x, y TaskFigure) int {
		return cmp.Or(cmp.Compare(y.Attempts, x.Attempts), cmp.Compare(y.DurationMS, x.DurationMS))
	})
	in.CostByTask = topTasks(tasks, func(TaskFigure) bool { return true }, func(x, y TaskFigure) int {
		return cmp.Or(compareCost(y.CostUSD, x.CostUSD), cmp.Compare(y.InputTokens+y.OutputTokens, x.InputTokens+x.OutputTokens))
	})
	for _, k := range cmdOrder {
		if c := cmds[k]; c.Failures > 0 {
			in.FailingCommands = append(in.FailingCommands, *c)
		}
	}
	slices.SortStableFunc(in.FailingCommands, func(x, y CommandStat) int {
		return cmp.Or(cmp.Compare(y.Failures, x.Failures), cmp.Compare(y.Runs, x.Runs))
	})
	in.FailingCommands = in.FailingCommands[:min(len(in.FailingCommands), insightLimit)]
	for _, p := range patterns {
		in.ErrorPatterns = append(in.ErrorPatterns, *p)
	}
	slices.SortFunc(in.ErrorPatterns, func(x, y ErrorPattern) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), x.First.Compare(y.First), cmp.Compare(x.Pattern, y.Pattern))
	})
	in.ErrorPatterns = in.ErrorPatterns[:min(len(in.ErrorPatterns), insightLimit)]
	slices.SortStableFunc(in.CostByAgent, func(x, y AgentFigure) int {
		return cmp.Or(compareCost(y.CostUSD, x.CostUSD), cmp.Compare(y.InputTokens+y.OutputTokens, x.InputTokens+x.OutputTokens))
	})
	return in
}

// topTasks keeps the tasks that qualify, sorted, at most insightLimit;
// ties keep the record's order.
func topTasks(tasks []TaskFigure, keep func(TaskFigure) bool, order func(x, y TaskFigure) int) []TaskFigure {
	out := []TaskFigure{}
	for _, t := range tasks {
		if keep(t) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, order)
	return out[:min(len(out), insightLimit)]
}

// compareCost orders costs with unknown below every known one.
func compareCost(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

// agentCosts is what each agent of a session spent, and the coordinator
// itself: the session's total less its agents', since a spawn_agent
// child's usage is counted in its parent's too.
func agentCosts(s SessionRecords) []AgentFigure {
	id := s.Analysis.SessionID
	var out []AgentFigure
	var in, outTok int64
	var costs []*float64
	for _, a := range s.Timeline.Agents {
		out = append(out, AgentFigure{Session: id, Agent: a.ID, Task: a.Task, InputTokens: a.InputTokens, OutputTokens: a.OutputTokens, CostUSD: a.CostUSD})
		in += a.InputTokens
		outTok += a.OutputTokens
		if a.InputTokens+a.OutputTokens > 0 {
			costs = append(costs, a.CostUSD)
		}
	}
	main := AgentFigure{Session: id, Agent: event.MainAgent,
		InputTokens: max(0, s.Analysis.InputTokens-in), OutputTokens: max(0, s.Analysis.OutputTokens-outTok)}
	if total, children := s.Analysis.CostUSD, sumKnown(costs); total != nil && children != nil {
		main.CostUSD = ptr(max(0, text.RoundUSD(*total-*children)))
	}
	if main.InputTokens+main.OutputTokens > 0 {
		out = append(out, main)
	}
	return out
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return oneLine(s, 200)
}

// Patterns that vary between errors that are otherwise the same, most
// specific first: a path may hold numbers and hex, so it goes before them.
var (
	errUUID = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	})
	errPath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:[A-Za-z]:\\|~?/|\.{1,2}/|\b[\w.-]+/)[\w.@+~-]*(?:[/\\][\w.@+~-]*)*`)
	})
	errHex = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b|\b(?:[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*|[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*)\b`)
	})
	errNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+(?:\.\d+)?`) })
)

// ErrorKey normalises an error message so that errors alike group
// together: ids, paths, hex and numbers become placeholders, whitespace
// one space, and the result is cut at 160 characters.
func ErrorKey(msg string) string {
	s := text.OneLine(msg)
	s = errUUID().ReplaceAllString(s, "<id>")
	s = errPath().ReplaceAllStringFunc(s, func(p string) string {
		if strings.ContainsAny(p, `/\`) {
			return "<path>"
		}
		return p
	})
	s = errHex().ReplaceAllStringFunc(s, func(h string) string {
		if len(h) >= 6 || strings.HasPrefix(strings.ToLower(h), "0x") {
			return "<hex>"
		}
		return h
	})
	s = errNumber().ReplaceAllString(s, "<n>")
	return oneLine(s, 160)
}

// Text is the insights for people: short lists under plain headings.
func (in Insights) Text() string {
	var b strings.Builder
	multi := len(in.Sessions) > 1
	name := func(t TaskFigure) string {
		s := t.ID + " " + oneLine(t.Title, 50)
		if multi {
			s = shortID(t.Session) + " " + s
		}
		return s
	}
	section := func(title string, empty bool) bool {
		fmt.Fprintf(&b, "%s\n", title)
		if empty {
			b.WriteString("  none\n")
		}
		return !empty
	}
	if multi {
		fmt.Fprintf(&b, "sessions: %s\n\n", strings.Join(in.Sessions, ", "))
	}
	if section("slowest tasks", len(in.Slowest) == 0) {
		t := table{right: map[int]bool{1: true, 2: true}}
		for _, x := range in.Slowest {
			t.add(name(x), eventwords.Duration(time.Duration(x.DurationMS)*time.Millisecond), fmt.Sprintf("%d %s", x.Attempts, text.Plural(x.Attempts, "attempt", "attempts")), x.State)
		}
		t.write(&b, "  ")
	}
	b.WriteByte('\n')
	if section("most retried tasks", len(in.MostRetried) == 0) {
		t := table{right: map[int]bool{1: true}}
		for _, x := range in.MostRetried {
			t.add(name(x), text.Counted(x.Attempts, "attempt", "attempts"), x.State)
		}
		t.write(&b, "  ")
	}
	b.WriteByte('\n')
	if section("commands that fail most", len(in.FailingCommands) == 0) {
		t := table{right: map[int]bool{1: true}}
		for _, c := range in.FailingCommands {
			t.add(oneLine(c.Command, 60), fmt.Sprintf("%d/%d failed", c.Failures, c.Runs), oneLine(c.LastFailure, 60))
		}
		t.write(&b, "  ")
	}
	b.WriteByte('\n')
	if section("errors by pattern", len(in.ErrorPatterns) == 0) {
		t := table{right: map[int]bool{0: true}}
		for _, p := range in.ErrorPatterns {
			t.add(fmt.Sprintf("%d×", p.Count), kindNames(p.Kinds), oneLine(p.Pattern, 100))
		}
		t.write(&b, "  ")
	}
	b.WriteByte('\n')
	if section("cost by task", len(in.CostByTask) == 0) {
		t := table{right: map[int]bool{1: true, 2: true}}
		for _, x := range in.CostByTask {
			t.add(name(x), money(x.CostUSD), thousands(x.InputTokens+x.OutputTokens)+" tokens")
		}
		t.write(&b, "  ")
	}
	b.WriteByte('\n')
	if section("cost by agent", len(in.CostByAgent) == 0) {
		t := table{right: map[int]bool{2: true, 3: true}}
		for _, a := range in.CostByAgent[:min(len(in.CostByAgent), insightLimit)] {
			agent := a.Agent
			if multi {
				agent = shortID(a.Session) + " " + agent
			}
			t.add(agent, orDashStr(a.Task), money(a.CostUSD), thousands(a.InputTokens+a.OutputTokens)+" tokens")
		}
		t.write(&b, "  ")
		if more := len(in.CostByAgent) - insightLimit; more > 0 {
			fmt.Fprintf(&b, "  … and %d more\n", more)
		}
	}
	return b.String()
}

// kindNames is "task, tool 2": the kinds of errors in a group.
func kindNames(kinds map[string]int) string {
	names := make([]string, 0, len(kinds))
	for k, n := range kinds {
		if n > 1 {
			k = fmt.Sprintf("%s %d", k, n)
		}
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// shortID is the random part of a session id, which tells sessions of
// one day apart in a narrow column.
func shortID(id string) string {
	if _, r, ok := strings.Cut(id, "-"); ok && len(r) >= 6 {
		return r[:6]
	}
	return id
}
