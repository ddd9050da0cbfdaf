package machine

import (
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// TestSettleWordsEachEndOnce: each way an attempt can end is settled in
// one set of words, which both hosts then share.
func TestSettleWordsEachEndOnce(t *testing.T) {
	t.Parallel()
	task := planfile.Task{ID: "t1", Title: "fix it"}
	until := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cost := 0.5
	for _, tc := range []struct {
		name    string
		r       Report
		failure string
		what    string // the limit's name, when one cut it short
		try     LastTry
		passed  bool
	}{
		{name: "no claim", r: Report{Summary: "gave up"}, failure: NotCompleted + ": gave up",
			try: LastTry{Error: NotCompleted + ": gave up", Summary: "gave up"}},
		{name: "an error", r: Report{Err: "boom", Summary: "s"}, failure: "boom", try: LastTry{Error: "boom", Summary: "s"}},
		{name: "verify refutes", r: Report{Completed: true, Verify: &event.VerifyRun{Output: "2 fail"}, VerifyFailed: "go test", VerifyOutput: "\n2 fail\n"},
			failure: "verification failed: 2 fail (`go test` did not pass)", try: LastTry{Error: "the --verify command failed", Verify: "2 fail"}},
		{name: "a usage limit", r: Report{Err: "hit", Limit: &LimitSeen{Kind: memory.WaitUsageLimit, Agent: "x", Until: until}}, what: "the x usage limit"},
		{name: "a rate limit", r: Report{Err: "429", Limit: &LimitSeen{Kind: memory.WaitRateLimit}}, what: "the rate limit"},
		{name: "a pass", r: Report{Completed: true, Verify: &event.VerifyRun{OK: true}}, passed: true},
	} {
		tc.r.Task, tc.r.Attempt = task, 1
		o := Settle(tc.r)
		if o.Failure != tc.failure || o.LastTry != tc.try || o.Passed() != tc.passed {
			t.Errorf("%s: failure %q, told %+v, passed %v; want %q, %+v, %v", tc.name, o.Failure, o.LastTry, o.Passed(), tc.failure, tc.try, tc.passed)
		}
		if (o.Limit != nil) != (tc.what != "") || o.Limit != nil && (o.Limit.What != tc.what || o.Limit.Reason != tc.r.Limit.Kind || o.Limit.Err != tc.r.Err) {
			t.Errorf("%s: limit %+v, want %q", tc.name, o.Limit, tc.what)
		}
	}
	done := Settle(Report{Task: task, Attempt: 2, Completed: true, Summary: "fixed", Usage: conversation.Usage{InputTokens: 10, OutputTokens: 2}, CostUSD: &cost}).Counted()
	if e := done.Progress(until, "s1", 3); !done.Done || e.Body != "fixed\n\nTokens for this task: 10 in, 2 out, $0.50." || e.TaskID != "t1" || e.Attempt != 2 || e.Title != "fix it" {
		t.Errorf("done %v, progress %+v", done.Done, e)
	}
	if c := Settle(Report{Task: task, Attempt: 1, ConfigErr: true, Err: "no key", Limit: &LimitSeen{}}); !c.ConfigErr || c.Failure != "no key" || c.Limit != nil {
		t.Errorf("a configuration error settles as %+v", c)
	}
	if f := Settle(Report{Task: task, Completed: true, Summary: "s"}).FailedBy("conflict", true); f.Passed() || !f.Final || f.LastTry.Error != "conflict" {
		t.Errorf("a merge conflict settles as %+v", f)
	}
}
