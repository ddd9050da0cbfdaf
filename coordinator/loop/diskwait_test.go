package loop

import (
	"context"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// TestModelWordsAreNoFullDisk: a worker whose model says "no space left on
// device" in its summary, on a disk with room, spends its attempts like
// any failed attempt; only ralph's own errors or the file system itself
// say the disk is full.
func TestModelWordsAreNoFullDisk(t *testing.T) {
	root, fs := taskProject(t, taskList(1))
	calls := 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := Run(ctx, Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 1, Backoff: time.Millisecond}, MaxWait: time.Hour,
		Breaker: func(Stats) (bool, error) { return false, nil },
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			calls++
			return Outcome{Summary: "I could not: no space left on device"}
		}),
	})
	if calls != 2 || len(res.Failed) != 1 || ctx.Err() != nil {
		t.Fatalf("%d attempts, result %+v: the model's words were taken for a full disk", calls, res)
	}
}
