package loop

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// The task loop's task_changed events carry each attempt's number, what
// it spent, its verification and why it failed: a session's record holds
// its own task timeline.
func TestTaskEventsRecordEachAttempt(t *testing.T) {
	root, fs := taskProject(t, "- [ ] flaky <!-- ralph:id=t1 -->\n")
	events := pubsub.NewBroker[event.Event]()
	var mu sync.Mutex
	var changed []event.Event
	defer events.Subscribe(context.Background(), func(ev event.Event) {
		if ev.Type == event.TaskChanged {
			mu.Lock()
			changed = append(changed, ev)
			mu.Unlock()
		}
	}, pubsub.Sync())()
	cost := 0.002
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 1, Backoff: time.Millisecond}, Events: events,
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			return Outcome{Completed: true, Usage: conversation.Usage{InputTokens: 10, OutputTokens: 2}, CostUSD: &cost}
		}),
		VerifyCommands: []string{"check"}, Verify: func(context.Context, Workspace, string) (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			if len(changed) < 3 {
				return false, strings.Repeat("noise\n", 1000) + "--- FAIL: TestX"
			}
			return true, "ok"
		},
	})
	if res.IsError || len(res.Done) != 1 {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	var texts []string
	for _, ev := range changed {
		texts = append(texts, ev.Text)
	}
	if strings.Join(texts, ",") != "t1 in_progress,t1 open,t1 in_progress,t1 done" {
		t.Fatalf("task events %v", texts)
	}
	for i, ev := range changed {
		if ev.Task != "t1" || ev.TaskAttempt == nil || ev.TaskAttempt.Number != i/2+1 || ev.Output != "flaky" {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
	retry, done := changed[1], changed[3]
	v := retry.TaskAttempt.Verify
	if v == nil || v.OK || !strings.HasSuffix(v.Output, "--- FAIL: TestX") || len(v.Output) > verifyOutputLimit {
		t.Errorf("the failed verify run is not recorded with the end of its output: %+v", v)
	}
	if !retry.IsError || !strings.HasPrefix(retry.TaskAttempt.Error, "verification failed: noise") {
		t.Errorf("retry: %+v", retry.TaskAttempt)
	}
	if retry.Usage == nil || retry.Usage.InputTokens != 10 || retry.CostUSD == nil || *retry.CostUSD != cost {
		t.Errorf("retry spent %+v %v", retry.Usage, retry.CostUSD)
	}
	if done.IsError || done.TaskAttempt.Error != "" || done.TaskAttempt.Verify == nil || !done.TaskAttempt.Verify.OK {
		t.Errorf("done: %+v", done.TaskAttempt)
	}
}
