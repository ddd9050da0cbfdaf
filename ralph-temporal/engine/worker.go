package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/workers"
)

// HeartbeatThrottle bounds how long an activity's heartbeat waits to be
// sent. An activity learns of its cancellation (ralph stop) only from a
// heartbeat's reply; the SDK's default throttle is 0.8 × the heartbeat
// timeout (24 s here), which made a hard stop of 64 attempts take 8 s.
const HeartbeatThrottle = 500 * time.Millisecond

// WorkerOptions configures a worker.
type WorkerOptions struct {
	Conn Conn
	// Dir holds the clones and worktrees ("": ./ralph-temporal-work).
	Dir string
	// Parallel is how many task attempts run at once on this worker.
	Parallel int
}

// Register puts the workflow and the activities on w.
func Register(w worker.Registry, a *Activities) {
	w.RegisterWorkflowWithOptions(NewTaskLoop(loop.CompileCondition), workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(a.Attempt, activity.RegisterOptions{Name: AttemptName})
	w.RegisterActivityWithOptions(a.Integrate, activity.RegisterOptions{Name: IntegrateName})
}

// RunWorker runs a worker until ctx ends.
func RunWorker(ctx context.Context, o WorkerOptions) error {
	if o.Dir == "" {
		o.Dir = "ralph-temporal-work"
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	c, err := o.Conn.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot make the worker's directory: %w", err)
	}
	// Processes an external agent starts outside its group are
	// reparented to the worker, so they are found and stopped with it.
	_ = workers.BecomeSubreaper()
	w := worker.New(c, o.Conn.TaskQueue, worker.Options{
		MaxConcurrentActivityExecutionSize: o.Parallel + 1, // attempts, and an integration beside them
		MaxConcurrentActivityTaskPollers:   4,
		MaxConcurrentWorkflowTaskPollers:   4,
		MaxHeartbeatThrottleInterval:       HeartbeatThrottle,
		DefaultHeartbeatThrottleInterval:   HeartbeatThrottle,
		WorkerStopTimeout:                  5 * time.Second,
	})
	Register(w, NewActivities(c, dir))
	if err := w.Start(); err != nil {
		return fmt.Errorf("cannot start the worker: %w", err)
	}
	fmt.Fprintf(os.Stderr, "ralph-temporal: worker on task queue %s at %s (namespace %s), work in %s\n", o.Conn.TaskQueue, o.Conn.Address, o.Conn.Namespace, dir)
	<-ctx.Done()
	w.Stop()
	return nil
}
