package review

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers/tools"
)

// fakeAgents answers each child by calling its Finish tool with what
// answer returns for its prompt.
type fakeAgents struct {
	answer func(prompt string) string
	mu     sync.Mutex
	calls  []coordinator.ChildTask
}

func (f *fakeAgents) RunChild(ctx context.Context, t coordinator.ChildTask) (event.Result, string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, t)
	f.mu.Unlock()
	if a := f.answer(t.Prompt); a != "" {
		for _, tool := range t.Finish {
			tool.Run(ctx, json.RawMessage(a))
		}
	}
	return event.Result{Text: "done"}, "", nil
}

// TestRunFixesConfirmedFindingsUntilClean: round one finds a major bug
// and a quibble; the check confirms the bug and rejects the quibble; the
// fix runs; round two finds nothing; every finding and the fix are
// recorded; reviewers are read-only, the fixer is not.
func TestRunFixesConfirmedFindingsUntilClean(t *testing.T) {
	round := 1
	var mu sync.Mutex
	agents := &fakeAgents{answer: func(p string) string {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(p, "as the correctness reviewer") && round == 1:
			return `{"findings":[{"file":"a.go","line":3,"severity":"MAJOR","why":"adds"}]}`
		case strings.Contains(p, "as the simplicity reviewer") && round == 1:
			return `{"findings":[{"file":"a.go","line":9,"severity":"meh","why":"long"}]}`
		case strings.Contains(p, "as the "):
			return `{"findings":[]}`
		case strings.Contains(p, "Reviewers reported"):
			return `{"verdicts":[{"id":"f1","verdict":"confirmed","reason":"it adds"},{"id":"f2","verdict":"no","reason":"taste"}]}`
		case strings.Contains(p, "confirmed the findings below"):
			round = 2
			return `{"summary":"fixed"}`
		}
		return ""
	}}
	var recs []memory.DecisionRecord
	var rmu sync.Mutex
	rep, err := Run(context.Background(), agents, Input{TaskID: "t1", Diff: func(context.Context) (string, error) { return "+x\n", nil }},
		Options{Record: func(d memory.DecisionRecord) { rmu.Lock(); recs = append(recs, d); rmu.Unlock() }})
	if err != nil || !rep.Clean || rep.Rounds != 2 || len(rep.Fixes) != 1 || rep.Fixes[0] != "fixed" {
		t.Fatalf("report %+v, err %v", rep, err)
	}
	if len(rep.Findings) != 2 || rep.Findings[0].Verdict != Confirmed || rep.Findings[0].Severity != Major ||
		rep.Findings[1].Verdict != Rejected || rep.Findings[1].Severity != Minor || rep.Findings[1].Reason != "taste" {
		t.Fatalf("findings %+v", rep.Findings)
	}
	kinds := map[string]int{}
	for _, d := range recs {
		kinds[d.Kind]++
	}
	if kinds["review_finding"] != 2 || kinds["review_fix"] != 1 || kinds["review_done"] != 1 {
		t.Fatalf("records %v", kinds)
	}
	for _, c := range agents.calls {
		fixer := strings.Contains(c.Prompt, "confirmed the findings below")
		if want := map[bool]tools.Role{true: tools.RoleFixer, false: tools.RoleReviewer}[fixer]; c.Role != want {
			t.Errorf("role %v for %.40q, want %v", c.Role, c.Prompt, want)
		}
	}
}

// TestRunFindingsOnlyChecksAndFixesNothing: one round of reviewers and no
// other agent.
func TestRunFindingsOnlyChecksAndFixesNothing(t *testing.T) {
	agents := &fakeAgents{answer: func(p string) string {
		if strings.Contains(p, "as the correctness reviewer") {
			return `{"findings":[{"file":"a.go","severity":"major","why":"adds"}]}`
		}
		return `{"findings":[]}`
	}}
	rep, err := Run(context.Background(), agents, Input{Diff: func(context.Context) (string, error) { return "+x\n", nil }}, Options{FindingsOnly: true})
	if err != nil || rep.Clean || len(rep.Findings) != 1 || len(agents.calls) != len(Defaults()) {
		t.Fatalf("report %+v, %d agents, err %v", rep, len(agents.calls), err)
	}
}

// TestAnotherAgentsFindingsAreRead: an external reviewer's last ```json
// block is its findings; text without one is none.
func TestAnotherAgentsFindingsAreRead(t *testing.T) {
	ft := &findingsTool{reviewer: "goal"}
	got := ft.parse("I looked.\n```json\n[]\n```\nThen more:\n```json\n[{\"file\":\"b.go\",\"line\":2,\"severity\":\"major\",\"why\":\"\\u001b[31mred\"}]\n```\n")
	if len(got) != 1 || got[0].File != "b.go" || got[0].Reviewer != "goal" || strings.ContainsRune(got[0].Why, 0x1b) {
		t.Fatalf("parsed %+v", got)
	}
	if got := (&findingsTool{}).parse("no findings, no list"); len(got) != 0 {
		t.Fatalf("parsed %+v from prose", got)
	}
}

// TestNothingToReview: an empty diff is said, not reviewed, and no
// review is recorded as having cost anything.
func TestNothingToReview(t *testing.T) {
	var recs []memory.DecisionRecord
	_, err := Run(context.Background(), &fakeAgents{answer: func(string) string { return "" }},
		Input{Diff: func(context.Context) (string, error) { return "  \n", nil }},
		Options{Record: func(d memory.DecisionRecord) { recs = append(recs, d) }})
	if err != ErrNothingToReview || len(recs) != 0 {
		t.Fatalf("err %v, records %v", err, recs)
	}
}

// TestRunFailsWhenAReviewerDoesNotReport: a reviewer that never calls
// report_findings, or whose other agent fails, makes the review fail,
// named: ErrIncomplete, Clean false, and the reason in Error; what the
// others found is kept.
func TestRunFailsWhenAReviewerDoesNotReport(t *testing.T) {
	agents := &fakeAgents{answer: func(p string) string {
		if strings.Contains(p, "as the goal reviewer") {
			return ""
		}
		return `{"findings":[]}`
	}}
	diff := func(context.Context) (string, error) { return "+x\n", nil }
	for _, only := range []bool{true, false} {
		rep, err := Run(context.Background(), agents, Input{Diff: diff}, Options{FindingsOnly: only})
		if !errors.Is(err, ErrIncomplete) || rep.Clean || !strings.Contains(rep.Error, "the goal reviewer finished without calling report_findings") {
			t.Fatalf("findings-only %v: %v %+v", only, err, rep)
		}
	}
	ext := func(_ context.Context, prompt string) (string, conversation.Usage, error) {
		if strings.Contains(prompt, "as the tests reviewer") {
			return "", conversation.Usage{}, errors.New("timed out")
		}
		return "```json\n[]\n```", conversation.Usage{}, nil
	}
	rep, err := Run(context.Background(), agents, Input{Diff: diff}, Options{FindingsOnly: true, Agent: ext})
	if !errors.Is(err, ErrIncomplete) || rep.Clean || !strings.Contains(rep.Error, "the tests reviewer failed: timed out") {
		t.Fatalf("another agent: %v %+v", err, rep)
	}
}
