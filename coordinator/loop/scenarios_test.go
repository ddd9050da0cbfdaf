package loop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide/scenarios"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/agents"
)

// TestLoopScenarios runs the table both hosts of the task loop share
// (ralph-temporal's workflow tests run the same table).
func TestLoopScenarios(t *testing.T) {
	for _, sc := range scenarios.All {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			root, fs := taskProject(t, sc.Tasks)
			var mu sync.Mutex
			var starts []string
			breaker := func(Stats) (bool, error) { return false, nil }
			if sc.Breaker != nil {
				breaker = func(s Stats) (bool, error) { return sc.Breaker(s.NoProgress, s.SameErrorRepeats), nil }
			}
			var ask func(context.Context, string) bool
			if sc.Ask {
				// Someone could be asked, but nobody answers: no.
				ask = func(context.Context, string) bool { return false }
			}
			events := pubsub.NewBroker[event.Event]()
			var decisions []string
			reasons := map[string]string{}
			unsubscribe := events.Subscribe(context.Background(), func(ev event.Event) {
				if d := ev.Decision; ev.Type == event.Decision && d != nil {
					mu.Lock()
					k := strings.TrimSpace(d.Kind + " " + d.Task)
					decisions = append(decisions, k)
					if _, ok := reasons[k]; !ok {
						reasons[k] = d.Reason
					}
					mu.Unlock()
				}
			})
			defer unsubscribe()
			// The verify command judges the attempt that just ended:
			// one runs at a time (Parallel 1).
			var last struct {
				id      string
				attempt int
			}
			var checks []string
			if sc.Verifies() {
				checks = []string{scenarios.VerifyCommand}
			}
			res := Run(context.Background(), Options{
				Fs: fs, Root: root, Policy: sc.Policy, Breaker: breaker, Ask: ask, MaxWait: sc.MaxWait, Events: events,
				VerifyCommands: checks,
				Verify: func(context.Context, Workspace, string) (bool, string) {
					mu.Lock()
					defer mu.Unlock()
					return sc.Verified(last.id, last.attempt)
				},
				Worker: fnWorker(func(_ context.Context, task planfile.Task, attempt int) Outcome {
					mu.Lock()
					starts = append(starts, task.ID)
					last.id, last.attempt = task.ID, attempt
					mu.Unlock()
					if sc.Limited(task.ID, attempt) {
						return Outcome{Err: &agents.UsageLimitError{Agent: scenarios.LimitAgent, UsageLimit: agents.UsageLimit{Until: time.Now().Add(scenarios.LimitReset), Text: scenarios.LimitError}}}
					}
					if done, failure := sc.Result(task.ID, attempt); !done {
						return Outcome{Err: errors.New(failure)}
					}
					out := Outcome{Completed: true, Summary: "did " + task.ID}
					if sc.Costly(task.ID, attempt) {
						cost := scenarios.CostUSD
						out.Usage, out.CostUSD = scenarios.Spent, &cost
					}
					return out
				}),
			})
			if res.Reason != sc.Reason || res.IsError != sc.IsError {
				t.Fatalf("reason %q (error %v), want %q (error %v): %v", res.Reason, res.IsError, sc.Reason, sc.IsError, res.Err)
			}
			if !slices.Equal(res.Done, sc.Done) || !slices.Equal(res.Failed, sc.Failed) {
				t.Fatalf("done %v failed %v, want %v and %v", res.Done, res.Failed, sc.Done, sc.Failed)
			}
			if !slices.Equal(starts, sc.Starts) {
				t.Fatalf("starts %v, want %v", starts, sc.Starts)
			}
			mu.Lock()
			got := slices.Clone(decisions)
			mu.Unlock()
			if sc.Decisions != nil && !slices.Equal(got, sc.Decisions) {
				t.Errorf("decisions\n%q\nwant\n%q", got, sc.Decisions)
			}
			mu.Lock()
			wrong := sc.WrongReasons(reasons)
			mu.Unlock()
			for _, w := range wrong {
				t.Error(w)
			}
			if len(sc.Progress) > 0 {
				progress, err := memory.ReadProgress(fs, root)
				if err != nil {
					t.Fatal(err)
				}
				for id, want := range sc.Progress {
					if !strings.Contains(progress, want) {
						t.Errorf("progress of %s: %q holds no %q", id, progress, want)
					}
				}
			}
			f := loadTasks(t, fs, root)
			for _, task := range f.Tasks() {
				if task.Attempts != sc.Attempts[task.ID] {
					t.Errorf("task %s: %d attempts, want %d", task.ID, task.Attempts, sc.Attempts[task.ID])
				}
			}
		})
	}
}
