package review

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The tools a review's agents finish with. Their rows, with their
// descriptions (report_findings.md, …), are in workers' one list of tools;
// running them is the review's, so each hands its run method to
// tools.Build.
const (
	toolReportFindings = tools.ToolReportFindings
	toolJudgeFindings  = tools.ToolJudgeFindings
	toolFixesDone      = tools.ToolFixesDone
)

// findingsTool is a reviewer's report_findings.
type findingsTool struct {
	reviewer string
	mu       sync.Mutex
	found    []Finding
	// called: the reviewer reported, an empty list included.
	called bool
}

// tools are report_findings, built by the one list.
func (t *findingsTool) tools() []tools.Tool { return tools.Build(tools.Deps{Findings: t.run}) }

func (t *findingsTool) run(_ context.Context, args json.RawMessage) workers.Result {
	var p tools.ReportFindingsParams
	if err := json.Unmarshal(args, &p); err != nil {
		return workers.Result{IsError: true, Output: `report_findings needs {"findings": [{"file", "line", "severity", "why"}]}: ` + err.Error()}
	}
	var out []Finding
	for _, f := range p.Findings {
		sev := strings.ToLower(strings.TrimSpace(f.Severity))
		if sev != Major {
			sev = Minor
		}
		// The model's words reach the person's terminal and files.
		out = append(out, Finding{Reviewer: t.reviewer, File: text.StripControls(f.File), Line: f.Line, Severity: sev,
			Why: text.Clip(text.StripControls(f.Why), 1000)})
	}
	t.mu.Lock()
	t.found, t.called = out, true
	t.mu.Unlock()
	return workers.Result{Output: "reported; the review is done"}
}

// parse reads the findings another agent printed: the last ```json
// block of its answer (or the answer itself, when it is the list).
func (t *findingsTool) parse(answer string) []Finding {
	body := strings.TrimSpace(answer)
	if i := strings.LastIndex(body, "```json"); i >= 0 {
		body = body[i+len("```json"):]
		if j := strings.Index(body, "```"); j >= 0 {
			body = body[:j]
		}
	}
	raw, err := json.Marshal(json.RawMessage(strings.TrimSpace(body)))
	if err != nil {
		return nil
	}
	t.run(context.Background(), json.RawMessage(`{"findings":`+string(raw)+`}`))
	return t.get()
}

// reported says whether the reviewer reported at all: a reviewer that
// never did found nothing only as far as anyone knows.
func (t *findingsTool) reported() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.called
}

func (t *findingsTool) get() []Finding {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.found
}

type verdict struct{ Verdict, Reason string }

// verdictTool is the checking agent's judge_findings.
type verdictTool struct {
	mu  sync.Mutex
	got map[string]verdict
}

// tools are judge_findings, built by the one list.
func (t *verdictTool) tools() []tools.Tool { return tools.Build(tools.Deps{Verdicts: t.run}) }

func (t *verdictTool) run(_ context.Context, args json.RawMessage) workers.Result {
	var p tools.JudgeFindingsParams
	if err := json.Unmarshal(args, &p); err != nil {
		return workers.Result{IsError: true, Output: `judge_findings needs {"verdicts": [{"id", "verdict", "reason"}]}: ` + err.Error()}
	}
	got := map[string]verdict{}
	for _, v := range p.Verdicts {
		vd := strings.ToLower(strings.TrimSpace(v.Verdict))
		if vd != Confirmed {
			vd = Rejected
		}
		got[strings.TrimSpace(v.ID)] = verdict{Verdict: vd, Reason: text.Clip(text.StripControls(v.Reason), 500)}
	}
	t.mu.Lock()
	t.got = got
	t.mu.Unlock()
	return workers.Result{Output: "recorded; the check is done"}
}

func (t *verdictTool) get() map[string]verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got
}

// fixedTool is the fixing agent's fixes_done.
type fixedTool struct {
	mu      sync.Mutex
	summary string
}

// tools are fixes_done, built by the one list.
func (t *fixedTool) tools() []tools.Tool { return tools.Build(tools.Deps{Fixed: t.run}) }

func (t *fixedTool) run(_ context.Context, args json.RawMessage) workers.Result {
	var p tools.FixesDoneParams
	if err := json.Unmarshal(args, &p); err != nil {
		return workers.Result{IsError: true, Output: `fixes_done needs {"summary": "..."}: ` + err.Error()}
	}
	t.mu.Lock()
	t.summary = text.StripControls(p.Summary)
	t.mu.Unlock()
	return workers.Result{Output: "recorded"}
}

func (t *fixedTool) get() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.summary
}
