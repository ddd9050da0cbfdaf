package engine

import (
	"context"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory/planfile"
)

func pendingAttempt(t *testing.T, b beat, state enumspb.PendingActivityState, started, beaten time.Time) *workflowpb.PendingActivityInfo {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayloads(b)
	if err != nil {
		t.Fatal(err)
	}
	return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: AttemptName}, State: state, HeartbeatDetails: p,
		LastStartedTime: timestamppb.New(started), LastHeartbeatTime: timestamppb.New(beaten)}
}

// The status query's fleet names the worker of each attempt in flight as
// its heartbeat says, and none where the heartbeat is a lost worker's or
// the attempt waits for a worker.
func TestFleetOfNamesTheWorkerHoldingEachAttempt(t *testing.T) {
	now := time.Now()
	st := Status{Tasks: []remote.FleetTask{
		{ID: "t1", State: planfile.TaskInProgress}, {ID: "t2", State: planfile.TaskInProgress},
		{ID: "t3", State: planfile.TaskInProgress}, {ID: "t4", State: planfile.TaskInProgress},
		{ID: "t5", State: planfile.TaskDone, Worker: "b:2"},
	}}
	FleetOf(&st, []*workflowpb.PendingActivityInfo{
		pendingAttempt(t, beat{Task: "t1", Worker: "a:1", Phase: "working"}, enumspb.PENDING_ACTIVITY_STATE_STARTED, now, now.Add(time.Second)),
		pendingAttempt(t, beat{Task: "t2", Worker: "a:1", Phase: "working"}, enumspb.PENDING_ACTIVITY_STATE_STARTED, now, now.Add(-time.Second)),
		pendingAttempt(t, beat{Task: "t3", Worker: "b:2", Phase: "working"}, enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, now, now),
		{ActivityType: &commonpb.ActivityType{Name: IntegrateName}},
	})
	want := []remote.FleetTask{
		{ID: "t1", State: planfile.TaskInProgress, Worker: "a:1", Phase: "working"},
		{ID: "t2", State: planfile.TaskInProgress, Phase: "starting"},
		{ID: "t3", State: planfile.TaskInProgress, Phase: "waiting for a worker"},
		{ID: "t4", State: planfile.TaskInProgress},
		{ID: "t5", State: planfile.TaskDone, Worker: "b:2"},
	}
	for i := range want {
		if st.Tasks[i] != want[i] {
			t.Errorf("task %d = %+v, want %+v", i, st.Tasks[i], want[i])
		}
	}
}

// The status query holds every task, with the worker of each finished
// attempt; the worker of one in flight is Temporal's to say (FleetOf).
func TestWorkflowStatusHoldsTheFleet(t *testing.T) {
	tasks := "# Tasks\n\n- [ ] write <b>a</b> <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n- [ ] c <!-- ralph:id=c -->\n"
	release := make(chan struct{})
	e := newEnv(t, tasks, nil, func(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
		if in.Task.ID == "a" {
			select {
			case <-release:
			case <-ctx.Done():
				return AttemptOutcome{}, ctx.Err()
			}
		}
		return AttemptOutcome{Completed: true, Summary: "ok", Worker: "host:" + in.Task.ID}, nil
	})
	e.RegisterDelayedCallback(func() {
		defer close(release)
		var st Status
		v, err := e.QueryWorkflow(QueryStatus)
		if err != nil || v.Get(&st) != nil {
			t.Errorf("status: %v", err)
			return
		}
		want := []remote.FleetTask{
			{ID: "a", Title: "write <b>a</b>", State: planfile.TaskInProgress, Attempt: 1},
			{ID: "b", Title: "b", State: planfile.TaskDone, Attempt: 1, Worker: "host:b"},
			{ID: "c", Title: "c", State: planfile.TaskDone, Attempt: 1, Worker: "host:c"},
		}
		if st.SessionID == "" || len(st.Tasks) != len(want) {
			t.Errorf("status %+v", st)
			return
		}
		for i := range want {
			if st.Tasks[i] != want[i] {
				t.Errorf("task %d = %+v, want %+v", i, st.Tasks[i], want[i])
			}
		}
	}, 300*time.Millisecond)
	e.ExecuteWorkflow(WorkflowName, input(decide.Policy{Parallel: 2}))
	if res := e.result(t); res.Reason != decide.ReasonAllDone {
		t.Fatalf("%+v", res)
	}
}
