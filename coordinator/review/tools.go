package review

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// The tools a review's agents finish with.
const (
	toolReportFindings = "report_findings"
	toolJudgeFindings  = "judge_findings"
	toolFixesDone      = "fixes_done"
)

// reportParams are report_findings' arguments.
type reportParams struct {
	Findings []reportedFinding `json:"findings" required:"true" description:"the problems found; an empty list when there are none"`
}

type reportedFinding struct {
	File     string `json:"file" required:"true" description:"the file, relative to the project root"`
	Line     int    `json:"line,omitempty" description:"the line the problem is on"`
	Severity string `json:"severity" required:"true" description:"major (must be fixed before the work counts) or minor"`
	Why      string `json:"why" required:"true" description:"what is wrong and why, in a sentence or two"`
}

// findingsTool is a reviewer's report_findings.
type findingsTool struct {
	reviewer string
	mu       sync.Mutex
	found    []Finding
	// called: the reviewer reported, an empty list included.
	called bool
}

func (t *findingsTool) Def() workers.ToolDef {
	return workers.ToolDef{Name: toolReportFindings, Description: "Report the problems you found in the change, all at once, and finish the review.",
		Parameters: workers.Schema(reportParams{})}
}

func (t *findingsTool) Run(_ context.Context, args json.RawMessage) workers.Result {
	var p reportParams
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
	t.Run(context.Background(), json.RawMessage(`{"findings":`+string(raw)+`}`))
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

// judgeParams are judge_findings' arguments.
type judgeParams struct {
	Verdicts []verdictParam `json:"verdicts" required:"true" description:"one verdict per finding"`
}

type verdictParam struct {
	ID      string `json:"id" required:"true" description:"the finding's id (f1, f2, …)"`
	Verdict string `json:"verdict" required:"true" description:"confirmed (a real problem in this change) or rejected"`
	Reason  string `json:"reason" required:"true" description:"why, in a sentence"`
}

type verdict struct{ Verdict, Reason string }

// verdictTool is the checking agent's judge_findings.
type verdictTool struct {
	mu  sync.Mutex
	got map[string]verdict
}

func (t *verdictTool) Def() workers.ToolDef {
	return workers.ToolDef{Name: toolJudgeFindings, Description: "Give your verdict on every finding, all at once, and finish.",
		Parameters: workers.Schema(judgeParams{})}
}

func (t *verdictTool) Run(_ context.Context, args json.RawMessage) workers.Result {
	var p judgeParams
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

type fixedParams struct {
	Summary string `json:"summary" required:"true" description:"what you changed, finding by finding"`
}

func (t *fixedTool) Def() workers.ToolDef {
	return workers.ToolDef{Name: toolFixesDone, Description: "Say the confirmed findings are fixed, with what you changed, and finish.",
		Parameters: workers.Schema(fixedParams{})}
}

func (t *fixedTool) Run(_ context.Context, args json.RawMessage) workers.Result {
	var p fixedParams
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
