package loop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// A person's stop is no failed attempt (issue 68): the attempt it cut
// short keeps its number, is counted as stopped, and spends none of the
// task's --retries when the run goes on.
func TestLoopStoppedAttemptSpendsNoRetry(t *testing.T) {
	root, fs := taskProject(t, "- [ ] the task <!-- ralph:id=t1 -->\n")
	q := interrupts.NewQueue()
	started := make(chan struct{}, 1)
	res := make(chan Result, 1)
	go func() {
		res <- Run(context.Background(), Options{
			Fs: fs, Root: root, Policy: decide.Policy{Retries: 1, Backoff: time.Millisecond}, Queue: q,
			Worker: fnWorker(func(ctx context.Context, _ planfile.Task, _ int) Outcome {
				started <- struct{}{}
				<-ctx.Done()
				return Outcome{Err: ctx.Err()}
			}),
		})
	}()
	<-started
	q.Push(interrupts.Interrupt{Kind: interrupts.HardStop})
	if r := <-res; r.Reason != ReasonInterrupted {
		t.Fatalf("result = %+v", r)
	}
	task, _ := loadTasks(t, fs, root).Find("t1")
	if task.State != planfile.TaskOpen || task.Attempts != 1 || task.Meta[stoppedMeta] != "1" {
		t.Fatalf("after the stop: %+v", task)
	}
	// Going on: the first attempt fails, and --retries 1 still allows
	// one more, which completes.
	var attempts []int
	r := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 1, Backoff: time.Millisecond},
		Breaker: func(Stats) (bool, error) { return false, nil },
		Worker: fnWorker(func(_ context.Context, _ planfile.Task, attempt int) Outcome {
			attempts = append(attempts, attempt)
			if len(attempts) == 1 {
				return Outcome{Err: errors.New("a test failed")}
			}
			return Outcome{Completed: true, Summary: "done"}
		}),
	})
	if r.IsError || len(r.Done) != 1 || len(attempts) != 2 || attempts[0] != 2 || attempts[1] != 3 {
		t.Fatalf("result %+v after attempts %v: the stopped attempt spent a retry", r, attempts)
	}
}
