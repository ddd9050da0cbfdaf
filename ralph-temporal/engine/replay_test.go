package engine

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide/scenarios"
)

// TestWorkflowsStartedBeforeTheMachineReplay replays histories recorded
// from the workflow at f31c8f1, before it became the machine's host,
// on a Temporal dev server: the scenarios' table of then, a limit waited
// out, and a last failure that trips the breaker with nothing left
// (which then waited out the cooldown for nothing; the machine ends at
// once, so only workflow.GetVersion keeps that history replaying). Each
// run's --breaker names its scenario, whose condition the recording
// used too. testdata/record_history_test.go.txt is the recorder: put it
// in ralph-temporal/engine of a checkout of f31c8f1 and run it with
// RECORD_ADDR (a dev server) and RECORD_OUT (this testdata directory).
func TestWorkflowsStartedBeforeTheMachineReplay(t *testing.T) {
	t.Parallel()
	trips := map[string]func(int, int) bool{
		"nothing left after a failure that trips the breaker": func(n, _ int) bool { return n >= 1 },
	}
	for _, sc := range scenarios.All {
		trips[sc.Name] = sc.Breaker
	}
	cond := func(_ string, name string) (loop.Condition, error) {
		trip := trips[name]
		return func(s loop.Stats) (bool, error) { return trip != nil && trip(s.NoProgress, s.SameErrorRepeats), nil }, nil
	}
	files, err := filepath.Glob(filepath.Join("testdata", "f31c8f1_*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("histories %v (%v)", files, err)
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(NewTaskLoop(cond), workflow.RegisterOptions{Name: WorkflowName})
		if err := r.ReplayWorkflowHistoryFromJSONFile(testLogger{t}, f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}

// TestWorkflowsThatContinuedAsNewReplay replays the three runs of one
// workflow recorded on a dev server after the diff and continue-as-new
// (historyChange): six tasks, two at once, the second failing once,
// continuing every 30 events or so. The recorder is
// testdata/measure_history_test.go.txt.
func TestWorkflowsThatContinuedAsNewReplay(t *testing.T) {
	t.Parallel()
	cond := func(string, string) (loop.Condition, error) {
		return func(loop.Stats) (bool, error) { return false, nil }, nil
	}
	files, err := filepath.Glob(filepath.Join("testdata", "shorthistory_run*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("histories %v (%v)", files, err)
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(NewTaskLoop(cond), workflow.RegisterOptions{Name: WorkflowName})
		if err := r.ReplayWorkflowHistoryFromJSONFile(testLogger{t}, f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
