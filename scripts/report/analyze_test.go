package report

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestAnalyzeKnownFixture(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureA(t, fs)
	a, err := Analyze(fs, root, idA)
	must(t, err)
	checks := []struct {
		name      string
		got, want any
	}{
		{"status", a.Status, "completed"},
		{"mode", a.Mode, "oneshot"},
		{"model", a.Model, "gpt-test"},
		{"duration", a.DurationMS, int64(6000)},
		{"turns", a.Turns, 3},
		{"iterations", a.Iterations, 3},
		{"input tokens", a.InputTokens, int64(1200)},
		{"output tokens", a.OutputTokens, int64(300)},
		{"cost", a.CostUSD, (*float64)(nil)},
		{"tool calls", a.ToolCalls, 4},
		{"tool errors", a.ToolErrors, 1},
		{"tools", a.Tools, []ToolStat{{"edit_file", 2, 1}, {"read_file", 1, 0}, {"write_file", 1, 0}}},
		{"errors", a.Errors, 2},
		{"errors by kind", a.ErrorsByKind, map[string]int{"retry": 1, "tool": 1}},
		{"retries", a.Retries, 1},
		{"interruptions", a.Interruptions, 0},
		{"tool success", *a.ToolSuccessRate, 0.75},
		{"tasks", a.Tasks, (*TaskStats)(nil)},
		{"unreadable", a.Unreadable, 0},
		{"started", a.StartedAt.Equal(t0), true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Cost unknown is null in JSON, never 0.
	b, _ := json.Marshal(a)
	if !strings.Contains(string(b), `"cost_usd":null`) {
		t.Errorf("cost is not null in %s", b)
	}
}

func TestAnalyzeTaskRun(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureRun(t, fs)
	a, err := Analyze(fs, root, idRun)
	must(t, err)
	want := TaskStats{Attempted: 2, Done: 1, Failed: 1, SuccessRate: ptr(0.5)}
	if a.Tasks == nil || !reflect.DeepEqual(*a.Tasks, want) {
		t.Fatalf("tasks = %+v, want %+v", a.Tasks, want)
	}
	if a.Iterations != 3 || a.Turns != 1 {
		t.Errorf("iterations %d turns %d, want 3 and 1", a.Iterations, a.Turns)
	}
	if txt := a.Text(); !strings.Contains(txt, "1 done, 1 failed of 2 attempted, 50.0% succeeded") {
		t.Errorf("text lacks the task line:\n%s", txt)
	}
}

// A crashed run leaves no session.json in its directory and a torn last
// event: the totals come from the events and the torn line is counted.
func TestAnalyzeWithoutStateRebuildsFromEvents(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureA(t, fs)
	must(t, fs.Remove(memory.SessionDir(root, idA)+"/session.json"))
	must(t, fs.Remove(memory.LogPath(root, idA, memory.ErrorsLog)))
	must(t, memory.AppendFile(fs, memory.LogPath(root, idA, memory.EventsLog), []byte(`{"type":"turn_sta`), false))
	a, err := Analyze(fs, root, idA)
	must(t, err)
	if a.Status != "completed" || a.Turns != 3 || a.InputTokens != 1000 || a.OutputTokens != 200 {
		t.Errorf("rebuilt totals: status %s turns %d tokens %d/%d; want completed 3 1000/200", a.Status, a.Turns, a.InputTokens, a.OutputTokens)
	}
	// Without errors.jsonl the error events stand in: one tool error, one retry.
	if a.Errors != 2 || !reflect.DeepEqual(a.ErrorsByKind, map[string]int{"retry": 1, "tool": 1}) {
		t.Errorf("errors %d %v, want 2 {retry 1, tool 1}", a.Errors, a.ErrorsByKind)
	}
	if a.Unreadable != 1 || len(a.Notes) != 2 {
		t.Errorf("unreadable %d notes %q; want 1 and two notes", a.Unreadable, a.Notes)
	}
}

// A chat's results carry growing totals; a resumed session's new process
// starts again from zero. The sum counts each token once.
func TestRunTotalsAcrossResume(t *testing.T) {
	var tot runTotals
	for _, r := range []event.Result{
		{Usage: conversation.Usage{InputTokens: 100, OutputTokens: 10}, CostUSD: ptr(0.10)},
		{Usage: conversation.Usage{InputTokens: 300, OutputTokens: 30}, CostUSD: ptr(0.30)}, // the same chat, a second run
		{Usage: conversation.Usage{InputTokens: 50, OutputTokens: 5}, CostUSD: ptr(0.05)},   // resumed by a new process
	} {
		tot.add(&r)
	}
	if tot.in != 350 || tot.out != 35 || tot.cost == nil || *tot.cost < 0.3499 || *tot.cost > 0.3501 {
		t.Fatalf("totals %d/%d cost %v, want 350/35 0.35", tot.in, tot.out, deref(tot.cost))
	}
	tot.add(&event.Result{Usage: conversation.Usage{InputTokens: 60, OutputTokens: 6}})
	if tot.in != 360 || tot.cost != nil {
		t.Fatalf("after a run without a price: %d tokens, cost %v; want 360 and unknown", tot.in, deref(tot.cost))
	}
}

func TestAnalyzeUnknownSession(t *testing.T) {
	_, err := Analyze(afero.NewMemMapFs(), root, "nope")
	if !errors.Is(err, memory.ErrNoSession) {
		t.Fatalf("err = %v, want ErrNoSession", err)
	}
}

func TestAnalysisText(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureA(t, fs)
	a, err := Analyze(fs, root, idA)
	must(t, err)
	txt := a.Text()
	for _, want := range []string{
		"status         completed (oneshot, gpt-test)\n",
		"duration       6s",
		"tokens         1,200 in / 300 out\n",
		"cost           unknown\n",
		"tool calls     4, 1 error, 75.0% succeeded\n",
		"                 edit_file         2  1 error\n",
		"errors         2: retry 1, tool 1\n",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
}

func TestCompare(t *testing.T) {
	a := Analysis{SessionID: "a", Status: "completed", DurationMS: 10000, Turns: 4, InputTokens: 1000, OutputTokens: 100,
		CostUSD: ptr(0.02), ToolCalls: 10, Errors: 2, Retries: 0, ToolSuccessRate: ptr(0.8)}
	b := Analysis{SessionID: "b", Status: "failed", DurationMS: 15000, Turns: 6, InputTokens: 500, OutputTokens: 100,
		CostUSD: nil, ToolCalls: 10, Errors: 0, Retries: 3, ToolSuccessRate: ptr(0.9),
		Tasks: &TaskStats{Attempted: 2, Done: 1, SuccessRate: ptr(0.5)}}
	c := Compare(a, b)
	d := c.Deltas
	eq := func(name string, x Delta, diff, ratio *float64) {
		t.Helper()
		if !reflect.DeepEqual(x.Diff, diff) || !reflect.DeepEqual(x.Ratio, ratio) {
			t.Errorf("%s: delta %v ratio %v, want %v %v", name, deref(x.Diff), deref(x.Ratio), deref(diff), deref(ratio))
		}
	}
	eq("duration", d.DurationMS, ptr(5000.0), ptr(1.5))
	eq("turns", d.Turns, ptr(2.0), ptr(1.5))
	eq("input", d.InputTokens, ptr(-500.0), ptr(0.5))
	eq("output", d.OutputTokens, ptr(0.0), ptr(1.0))
	eq("cost (unknown in b)", d.CostUSD, nil, nil)
	eq("errors", d.Errors, ptr(-2.0), ptr(0.0))
	eq("retries (a is zero)", d.Retries, ptr(3.0), nil)
	eq("task success (a has none)", d.TaskSuccessRate, nil, nil)
	if x := d.ToolSuccessRate.Diff; x == nil || *x < 0.0999 || *x > 0.1001 {
		t.Errorf("tool success delta %v, want 0.1", deref(x))
	}
	want := `                       A        B    change  ratio
session                a        b
status         completed   failed
duration             10s      15s       +5s  1.50x
turns                  4        6        +2  1.50x
input tokens       1,000      500      -500  0.50x
output tokens        100      100         0  1.00x
cost               $0.02  unknown         -      -
tool calls            10       10         0  1.00x
errors                 2        0        -2  0.00x
retries                0        3        +3      -
tool success       80.0%    90.0%  +10.0 pp      -
task success           -    50.0%         -      -
`
	if got := c.Text(); got != want {
		t.Errorf("comparison text:\n%s\nwant:\n%s", got, want)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// The prompt cache's tokens and what caching saved add up across runs as
// the other totals do, and the text says them.
func TestRunTotalsOfTheCache(t *testing.T) {
	var tot runTotals
	for _, r := range []event.Result{
		{Usage: conversation.Usage{InputTokens: 1000, OutputTokens: 10, CacheWriteTokens: 900}, CostUSD: ptr(0.01), CacheSavedUSD: ptr(-0.000675)},
		{Usage: conversation.Usage{InputTokens: 2100, OutputTokens: 20, CacheReadTokens: 900, CacheWriteTokens: 1000}, CostUSD: ptr(0.02), CacheSavedUSD: ptr(0.00168)}, // a second run of the chat
		{Usage: conversation.Usage{InputTokens: 1100, OutputTokens: 5, CacheReadTokens: 1000}, CostUSD: ptr(0.005), CacheSavedUSD: ptr(0.0027)},                         // resumed by a new process
	} {
		tot.add(&r)
	}
	if tot.read != 1900 || tot.write != 1000 || tot.saved == nil || math.Abs(*tot.saved-(0.00168+0.0027)) > 1e-12 {
		t.Fatalf("cache totals %d/%d saved %v", tot.read, tot.write, deref(tot.saved))
	}
	a := Analysis{CacheReadTokens: tot.read, CacheWriteTokens: tot.write, CacheSavedUSD: tot.saved}
	if got, want := a.cacheLine(), "1,900 read from the cache / 1,000 written to it; caching saved $0.0044"; got != want {
		t.Errorf("cache line %q, want %q", got, want)
	}
	if (Analysis{}).cacheLine() != "" {
		t.Errorf("a session without cached tokens has a cache line")
	}
}
