package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// Analysis is what one session did, in numbers. Totals (turns, tokens,
// cost) come from the session's session.json, which the coordinator keeps
// current at every step; the breakdowns come from its logs. When
// session.json is missing or damaged the totals are rebuilt from the logs,
// so a crashed run can still be analysed.
type Analysis struct {
	SessionID string    `json:"session_id"`
	Status    string    `json:"status"`
	Mode      string    `json:"mode,omitempty"`
	Model     string    `json:"model,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// DurationMS spans the first to the last event (or, without events,
	// session.json's start to its end or last update).
	DurationMS   int64    `json:"duration_ms"`
	Turns        int      `json:"turns"`
	Iterations   int      `json:"iterations"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd"` // null when the model's price is unknown
	// CacheReadTokens and CacheWriteTokens are the parts of InputTokens
	// read from and written to the endpoint's prompt cache; CacheSavedUSD
	// is what that saved (cached tokens at the input price less what they
	// cost), when the model's price is known.
	CacheReadTokens  int64    `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64    `json:"cache_write_tokens,omitempty"`
	CacheSavedUSD    *float64 `json:"cache_saved_usd,omitempty"`
	// ToolCalls counts tool_call events; ToolErrors counts tool results
	// that were errors (refusals, failures and cancellations alike).
	ToolCalls  int        `json:"tool_calls"`
	ToolErrors int        `json:"tool_errors"`
	Tools      []ToolStat `json:"tools"`
	// Errors counts errors.jsonl records, which include retried model
	// calls and failed tool calls, by kind in ErrorsByKind.
	Errors        int            `json:"errors"`
	ErrorsByKind  map[string]int `json:"errors_by_kind"`
	Retries       int            `json:"retries"`
	Interruptions int            `json:"interruptions"`
	// ToolSuccessRate is successful tool results over tool calls; null
	// when the session made no tool call.
	ToolSuccessRate *float64 `json:"tool_success_rate"`
	// Tasks is present when the session worked on tasks.
	Tasks *TaskStats `json:"tasks,omitempty"`
	// Decisions sums up decisions.jsonl, with the notable decisions and
	// their reasons.
	Decisions DecisionStats `json:"decisions"`
	// Reviews are the reviews of finished work (ralph review, ralph run
	// --review): per task ("" for one outside a task), how many, and the
	// tokens and time they took.
	Reviews []ReviewStat `json:"reviews,omitempty"`
	// Unreadable counts log lines that could not be decoded (a torn
	// last append after a crash), and Notes says what was rebuilt.
	Unreadable int      `json:"unreadable_lines,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// ToolStat is one tool's calls and errors.
type ToolStat struct {
	Name   string `json:"name"`
	Calls  int    `json:"calls"`
	Errors int    `json:"errors"`
}

// TaskStats says how a task run went: attempted tasks are those the run
// picked, completed or failed; the success rate is done over attempted.
type TaskStats struct {
	Attempted   int      `json:"attempted"`
	Done        int      `json:"done"`
	Failed      int      `json:"failed"`
	SuccessRate *float64 `json:"success_rate"`
}

// Duration is DurationMS as a time.Duration.
func (a Analysis) Duration() time.Duration { return time.Duration(a.DurationMS) * time.Millisecond }

// Analyze reads session id's state and logs and sums them up. It fails
// only when the session does not exist or a log cannot be read at all.
func Analyze(fs afero.Fs, root, id string) (Analysis, error) {
	a, _, err := analyze(fs, root, id)
	return a, err
}

// analyzed is what analyze read on the way: the final report goes through
// the events and decisions again without a second read of a long log, and
// shows the same timeline the analysis counted the tasks from.
type analyzed struct {
	evs      []event.Event
	decs     []memory.DecisionRecord
	state    memory.State
	timeline Timeline
}

// analyze is Analyze that also returns what it read.
func analyze(fs afero.Fs, root, id string) (Analysis, analyzed, error) {
	if fi, err := fs.Stat(memory.SessionDir(root, id)); err != nil || !fi.IsDir() {
		return Analysis{}, analyzed{}, memory.NoSessionf("no session %s in %s", id, root)
	}
	a := Analysis{SessionID: id, ErrorsByKind: map[string]int{}, Tools: []ToolStat{}}
	evs, bad, err := readEvents(fs, root, id)
	if err != nil {
		return a, analyzed{}, err
	}
	a.Unreadable += bad
	errs, bad, err := memory.ReadJSONL[memory.ErrorRecord](fs, memory.LogPath(root, id, memory.ErrorsLog))
	if err != nil {
		return a, analyzed{}, err
	}
	a.Unreadable += bad
	decs, bad, err := memory.ReadJSONL[memory.DecisionRecord](fs, memory.LogPath(root, id, memory.DecisionsLog))
	if err != nil {
		return a, analyzed{}, err
	}
	a.Unreadable += bad
	a.Decisions = decisionStats(decs)
	a.Reviews = reviewStats(decs)
	modelErrs := a.fromEvents(evs)
	if len(errs) > 0 {
		for _, e := range errs {
			a.ErrorsByKind[e.Kind]++
		}
		a.Errors = len(errs)
	} else {
		// Sessions recorded before errors.jsonl existed: the events carry
		// the same facts.
		a.Errors = a.ToolErrors + a.Retries + modelErrs
		if modelErrs > 0 {
			a.ErrorsByKind["model"] = modelErrs
		}
		if a.ToolErrors > 0 {
			a.ErrorsByKind["tool"] = a.ToolErrors
		}
		if a.Retries > 0 {
			a.ErrorsByKind["retry"] = a.Retries
		}
	}
	st, err := memory.LoadSessionState(fs, root, id)
	switch {
	case err == nil:
		a.fromState(st)
	case errors.Is(err, memory.ErrNoSession):
		a.Notes = append(a.Notes, "the session has no session.json; totals are rebuilt from its events")
	default:
		a.Notes = append(a.Notes, err.Error()+"; totals are rebuilt from its events")
	}
	if a.Status == "" {
		a.Status = "unknown"
	}
	if a.Unreadable > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("%d log %s could not be read", a.Unreadable, text.Plural(a.Unreadable, "line", "lines")))
	}
	// The tasks are counted from the timeline the report draws, so the
	// two never disagree (CountTasks).
	tl := BuildTimeline(evs, st)
	a.Tasks = CountTasks(tl).Stats()
	return a, analyzed{evs: evs, decs: decs, state: st, timeline: tl}, nil
}

// fromEvents counts what the events say and sets the totals as far as the
// events know them; fromState then weighs them against session.json. It
// returns the
// number of error events, which stand in for errors.jsonl when that is
// missing.
func (a *Analysis) fromEvents(evs []event.Event) (modelErrs int) {
	stats := map[string]*ToolStat{}
	stat := func(name string) *ToolStat {
		if name == "" {
			name = "(unnamed)"
		}
		if stats[name] == nil {
			stats[name] = &ToolStat{Name: name}
		}
		return stats[name]
	}
	okResults := 0
	var first, last time.Time
	var lastResult *event.Result
	var totals runTotals
	afterResult := false
	for _, e := range evs {
		if !e.Time.IsZero() {
			if first.IsZero() || e.Time.Before(first) {
				first = e.Time
			}
			if e.Time.After(last) {
				last = e.Time
			}
		}
		switch e.Type {
		case event.SessionStarted:
			if e.Model != "" {
				a.Model = e.Model
			}
		case event.TurnStarted:
			if mainAgent(e) {
				a.Turns++
			}
		case event.ToolCall:
			a.ToolCalls++
			stat(e.ToolName).Calls++
		case event.ToolResult:
			if e.IsError {
				a.ToolErrors++
				stat(e.ToolName).Errors++
			} else {
				okResults++
			}
		case event.Retry:
			a.Retries++
		case event.Interrupted:
			a.Interruptions++
		case event.Error:
			modelErrs++
		case event.RunResult:
			if e.Result != nil {
				lastResult = e.Result
				totals.add(e.Result)
			}
		}
		// A chat session goes on after a result; whatever it does after
		// the last one is a run in progress (or one that crashed).
		if e.Type == event.RunResult {
			afterResult = false
		} else if lastResult != nil && e.Type != event.StateSaved {
			afterResult = true
		}
	}
	for _, t := range stats {
		a.Tools = append(a.Tools, *t)
	}
	slices.SortFunc(a.Tools, func(x, y ToolStat) int {
		return cmp.Or(cmp.Compare(y.Calls, x.Calls), cmp.Compare(x.Name, y.Name))
	})
	if calls := max(a.ToolCalls, okResults+a.ToolErrors); calls > 0 {
		a.ToolSuccessRate = ptr(float64(okResults) / float64(calls))
	}
	a.StartedAt, a.EndedAt = first, last
	a.DurationMS = last.Sub(first).Milliseconds()
	a.Iterations = a.Turns
	a.InputTokens, a.OutputTokens, a.CostUSD = totals.in, totals.out, totals.cost
	a.CacheReadTokens, a.CacheWriteTokens, a.CacheSavedUSD = totals.read, totals.write, totals.saved
	if r := lastResult; r != nil {
		a.Status = resultStatus(r)
	}
	if len(evs) > 0 && (lastResult == nil || afterResult) {
		// Events after the last result: the run is going on, or it crashed.
		a.Status = memory.StatusRunning
	}
	return modelErrs
}

// resultStatus maps a result subtype to the session status the
// coordinator saves alongside it.
func resultStatus(r *event.Result) string {
	switch {
	case r.Subtype == "interrupted":
		return memory.StatusInterrupted
	case r.IsError:
		return memory.StatusFailed
	}
	return memory.StatusCompleted
}

func (a *Analysis) fromState(st memory.State) {
	a.Status, a.Mode = st.Status, st.Mode
	if st.Model != "" {
		a.Model = st.Model
	}
	// session.json counts from the last time the session was started or
	// resumed, and includes the step in flight; the events cover every
	// finished run. The larger of the two is the better total.
	a.Turns = max(a.Turns, st.Turns)
	a.Iterations = st.Iteration
	a.InputTokens = max(a.InputTokens, int64(st.Usage.InputTokens))
	a.OutputTokens = max(a.OutputTokens, int64(st.Usage.OutputTokens))
	a.CacheReadTokens = max(a.CacheReadTokens, int64(st.Usage.CacheReadTokens))
	a.CacheWriteTokens = max(a.CacheWriteTokens, int64(st.Usage.CacheWriteTokens))
	if st.CostUSD != nil && (a.CostUSD == nil || *st.CostUSD > *a.CostUSD) {
		a.CostUSD = st.CostUSD
	}
	// The retries and interruptions of a session recorded before the logs
	// held them are known only from its counters.
	a.Retries = max(a.Retries, st.Retries)
	a.Interruptions = max(a.Interruptions, st.Interrupts)
	if a.StartedAt.IsZero() {
		a.StartedAt = st.StartedAt
		end := st.EndedAt
		if end.IsZero() {
			end = st.UpdatedAt
		}
		a.EndedAt = end
		if !st.StartedAt.IsZero() && end.After(st.StartedAt) {
			a.DurationMS = end.Sub(st.StartedAt).Milliseconds()
		}
	}
}

// runTotals adds up the usage and cost of result events. Each result
// carries its coordinator's running totals, which grow across the runs of
// one process (a chat) and restart from zero when a session is resumed by
// a new process; a total that went down marks such a restart.
type runTotals struct {
	in, out, prevIn, prevOut int64
	cost                     *float64
	prevCost                 float64
	costUnknown              bool
	// The prompt cache's part of in, and what it saved, counted alike.
	read, write, prevRead, prevWrite int64
	saved                            *float64
	prevSaved                        float64
}

func (t *runTotals) add(r *event.Result) {
	in, out := int64(r.Usage.InputTokens), int64(r.Usage.OutputTokens)
	read, write := int64(r.Usage.CacheReadTokens), int64(r.Usage.CacheWriteTokens)
	if in < t.prevIn || out < t.prevOut {
		t.prevIn, t.prevOut, t.prevCost = 0, 0, 0
		t.prevRead, t.prevWrite, t.prevSaved = 0, 0, 0
	}
	t.in += in - t.prevIn
	t.out += out - t.prevOut
	t.prevIn, t.prevOut = in, out
	t.read += max(read-t.prevRead, 0)
	t.write += max(write-t.prevWrite, 0)
	t.prevRead, t.prevWrite = read, write
	if s := r.CacheSavedUSD; s != nil {
		// What caching saved may be less than nothing (a run that only
		// wrote to the cache), so a restart shows in the tokens alone.
		t.saved = ptr(derefOr(t.saved) + *s - t.prevSaved)
		t.prevSaved = *s
	}
	// One run without a known price makes the whole session's cost unknown:
	// a partial sum would pass for the total.
	if r.CostUSD == nil || t.costUnknown {
		t.cost, t.costUnknown = nil, true
		return
	}
	c := *r.CostUSD
	if c < t.prevCost {
		t.prevCost = 0
	}
	t.cost = ptr(text.RoundUSD(derefOr(t.cost) + c - t.prevCost))
	t.prevCost = c
}

func derefOr(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// ReviewStat is what reviewing one task cost.
type ReviewStat struct {
	Task       string `json:"task,omitempty"`
	Reviews    int    `json:"reviews"`
	Tokens     int    `json:"tokens"`
	DurationMS int64  `json:"duration_ms"`
}

// reviewStats sums the review_done decisions by task, in the order the
// tasks were first reviewed.
func reviewStats(decs []memory.DecisionRecord) []ReviewStat {
	var out []ReviewStat
	at := map[string]int{}
	for _, d := range decs {
		if d.Kind != "review_done" {
			continue
		}
		i, ok := at[d.Task]
		if !ok {
			i = len(out)
			at[d.Task] = i
			out = append(out, ReviewStat{Task: d.Task})
		}
		out[i].Reviews++
		out[i].Tokens += d.Tokens
		out[i].DurationMS += d.DurationMS
	}
	return out
}
