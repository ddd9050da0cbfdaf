package loop

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/agents"
)

func rateLimited(until time.Time) error {
	return &llm.Error{Kind: llm.ErrRateLimited, Status: 429, RetryAt: until, Msg: "the model endpoint asked to wait"}
}

// TestLimitWaitThenGoOn: a rate limit that resets in 300 ms is waited
// out: no task starts before the reset, the cut attempt spends neither a
// retry nor an iteration, session.json says until when, and every task
// ends done.
func TestLimitWaitThenGoOn(t *testing.T) {
	root, fs := taskProject(t, taskList(3))
	s := loopSession(t, fs, root)
	var snapshots []memory.State
	var mu sync.Mutex
	var starts []time.Time
	var reset time.Time
	var calls atomic.Int32
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 0}, MaxWait: time.Hour, Store: snapshotStore{s, &snapshots}, Events: recordInto(t, nil, s),
		Worker: fnWorker(func(_ context.Context, task planfile.Task, _ int) Outcome {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
			if calls.Add(1) == 1 {
				reset = time.Now().Add(300 * time.Millisecond)
				return Outcome{Err: rateLimited(reset)}
			}
			return Outcome{Completed: true}
		}),
	})
	if res.IsError || len(res.Done) != 3 || len(res.Failed) != 0 || res.Stats.Iterations != 3 || res.Stats.Errors != 0 {
		t.Fatalf("result = %+v", res)
	}
	if starts[1].Before(reset) {
		t.Errorf("a task started %s before the reset", reset.Sub(starts[1]))
	}
	f := loadTasks(t, fs, root)
	if first, _ := f.Find(res.Done[0]); first.Attempts != 2 {
		t.Errorf("the limited task has %d attempts, want 2 (the record keeps the cut one)", first.Attempts)
	}
	waited := false
	for _, st := range snapshots {
		if w := st.Wait; w != nil && w.Reason == memory.WaitRateLimit && w.Until.Equal(reset) && strings.HasPrefix(w.Text, "waiting for the rate limit until ") {
			waited = true
		}
	}
	if !waited {
		t.Error("session.json never said it waited for the rate limit, and until when")
	}
	var kinds []string
	for _, r := range decisions(t, fs, root, s) {
		if strings.HasPrefix(r.Kind, "limit_wait") {
			kinds = append(kinds, r.Kind)
		}
	}
	if strings.Join(kinds, " ") != "limit_wait limit_wait_over" {
		t.Errorf("decisions = %v", kinds)
	}
}

// TestLimitWaitSpendsNoRetry: with one retry, an attempt cut by a usage
// limit, a real failure and a success make a done task.
func TestLimitWaitSpendsNoRetry(t *testing.T) {
	root, fs := taskProject(t, taskList(1))
	var calls atomic.Int32
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 1, Backoff: time.Millisecond}, MaxWait: time.Hour,
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			switch calls.Add(1) {
			case 1:
				return Outcome{Err: &agents.UsageLimitError{Agent: agents.AgentCodex,
					UsageLimit: agents.UsageLimit{Until: time.Now().Add(50 * time.Millisecond), Text: "You've hit your usage limit."}}}
			case 2:
				return Outcome{Err: errors.New("tests fail")}
			}
			return Outcome{Completed: true}
		}),
	})
	if res.IsError || len(res.Done) != 1 || calls.Load() != 3 {
		t.Fatalf("result = %+v after %d calls", res, calls.Load())
	}
}

// TestLimitBeyondMaxWaitFails: a limit that resets later than MaxWait
// fails the attempt as any failure, in one sentence that says so.
func TestLimitBeyondMaxWaitFails(t *testing.T) {
	root, fs := taskProject(t, taskList(1))
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{OnError: OnErrorSkip}, MaxWait: time.Hour,
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			return Outcome{Err: rateLimited(time.Now().Add(3 * time.Hour))}
		}),
	})
	if len(res.Failed) != 1 {
		t.Fatalf("result = %+v", res)
	}
	f := loadTasks(t, fs, root)
	if c := f.Counts(); c.Failed != 1 {
		t.Fatalf("counts = %+v", c)
	}
	// And with --max-wait 0 nothing is waited for.
	root, fs = taskProject(t, taskList(1))
	s := loopSession(t, fs, root)
	res = Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{OnError: OnErrorSkip}, Store: s, Events: recordInto(t, nil, s),
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			return Outcome{Err: rateLimited(time.Now().Add(time.Minute))}
		}),
	})
	if len(res.Failed) != 1 {
		t.Fatalf("with MaxWait 0: result = %+v", res)
	}
	found := false
	for _, r := range decisions(t, fs, root, s) {
		if r.Kind == "task_skip" && strings.Contains(r.Reason, "ralph does not wait for limits with --max-wait 0") {
			found = true
		}
	}
	if !found {
		t.Error("the failure does not say why it was not waited for")
	}
}

// TestLimitWaitEndsAtOnceOnHardStop: a stop during a two-hour wait ends
// the loop within a second, the task open and none failed.
func TestLimitWaitEndsAtOnceOnHardStop(t *testing.T) {
	root, fs := taskProject(t, taskList(2))
	s := loopSession(t, fs, root)
	q := interrupts.NewQueue()
	done := make(chan Result, 1)
	go func() {
		done <- Run(context.Background(), Options{
			Fs: fs, Root: root, MaxWait: 6 * time.Hour, Queue: q, Store: s,
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
				return Outcome{Err: rateLimited(time.Now().Add(2 * time.Hour))}
			}),
		})
	}()
	waitUntil(t, func() bool { w := s.State().Wait; return w != nil && w.Until.Sub(time.Now()) > time.Hour })
	stopAt := time.Now()
	q.Push(interrupts.Interrupt{Kind: interrupts.HardStop})
	var res Result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end on a hard stop")
	}
	// The wait is two hours: seconds catch a stop not kept (how fast a
	// stop is, the e2e HardStop benchmark says).
	if took := time.Since(stopAt); took > 5*time.Second {
		t.Errorf("the loop took %s to stop", took)
	}
	if res.Reason != ReasonInterrupted || len(res.Failed) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if c := loadTasks(t, fs, root).Counts(); c.Open != 2 || c.Failed != 0 {
		t.Fatalf("counts = %+v", c)
	}
	if st := s.State(); st.Status != memory.StatusInterrupted || st.Wait != nil {
		t.Fatalf("state after the stop: %s, wait %+v", st.Status, st.Wait)
	}
}
