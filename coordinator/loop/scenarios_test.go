package loop

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/loop/decide/scenarios"
	"github.com/ralph-dev/ralph/memory"
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
			res := Run(context.Background(), Options{
				Fs: fs, Root: root, Policy: sc.Policy, Breaker: breaker,
				Worker: fnWorker(func(_ context.Context, task memory.Task, attempt int) Outcome {
					mu.Lock()
					starts = append(starts, task.ID)
					mu.Unlock()
					if done, failure := sc.Result(task.ID, attempt); !done {
						return Outcome{Err: errors.New(failure)}
					}
					return Outcome{Completed: true, Summary: "did " + task.ID}
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
			f := loadTasks(t, fs, root)
			for _, task := range f.Tasks() {
				if task.Attempts != sc.Attempts[task.ID] {
					t.Errorf("task %s: %d attempts, want %d", task.ID, task.Attempts, sc.Attempts[task.ID])
				}
			}
		})
	}
}
