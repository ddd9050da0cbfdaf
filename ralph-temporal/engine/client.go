package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// pollEvery is how often a follower asks the workflow for new events.
const pollEvery = 250 * time.Millisecond

// Start starts the project's run, or attaches to it when one runs: the
// workflow id is the project's, so two starts are one run.
func Start(ctx context.Context, c client.Client, taskQueue string, in RunInput) (client.WorkflowRun, error) {
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: in.Project.WorkflowID(), TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, WorkflowName, in)
}

// Follow writes the run's events to out as remote.Line JSON, one a line,
// until it ends, then its result. When ctx ends first (the follower was
// interrupted), the run is stopped and still followed to its end, for at
// most a minute.
func Follow(ctx context.Context, c client.Client, run client.WorkflowRun, out io.Writer) (RunResult, error) {
	enc := json.NewEncoder(out)
	var res RunResult
	done := make(chan error, 1)
	// The result is waited for without ctx: a stopped run still ends.
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 24*time.Hour)
	defer cancel()
	go func() { done <- run.Get(bg, &res) }()
	next := 0
	// The run continues as new when its history grows long
	// (continue.go), so the follower asks the workflow id's latest run;
	// when that is another run than the last one asked, the events that
	// one and any between emitted after the previous poll are read from
	// them first, closed as they are, each continuing the numbering of
	// the one before.
	cur := run.GetRunID()
	emit := func(page EventPage) {
		for i := range page.Events {
			_ = enc.Encode(remote.Line{Event: &page.Events[i]})
		}
		next = page.Next
	}
	poll := func() {
		page, err := queryEvents(bg, c, run.GetID(), "", next)
		if err != nil {
			return
		}
		for hops := 0; cur != "" && page.Run != "" && cur != page.Run && hops < maxHops; hops++ {
			if tail, err := queryEvents(bg, c, run.GetID(), cur, next); err == nil {
				emit(tail)
			}
			cur = continuedAs(bg, c, run.GetID(), cur)
		}
		if page.Run != "" {
			cur = page.Run
		}
		emit(page)
	}
	interrupted := ctx.Done()
	var deadline <-chan time.Time
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			poll()
			if err != nil {
				return res, fmt.Errorf("the run on Temporal failed: %w", err)
			}
			_ = enc.Encode(remote.Line{Result: &res})
			return res, nil
		case <-interrupted:
			interrupted = nil
			deadline = time.After(time.Minute)
			if err := Signal(bg, c, run.GetID(), Control{Op: remote.OpStop}); err != nil {
				return res, err
			}
		case <-deadline:
			return res, errors.New("the run did not end within a minute of the stop")
		case <-t.C:
			poll()
		}
	}
}

// queryEvents asks run runID of the workflow (the latest: "") for its
// events from since on.
func queryEvents(ctx context.Context, c client.Client, workflowID, runID string, since int) (EventPage, error) {
	var page EventPage
	v, err := c.QueryWorkflow(ctx, workflowID, runID, QueryEvents, since)
	if err != nil {
		return page, err
	}
	err = v.Get(&page)
	return page, err
}

// maxHops bounds the runs a follower walks between two polls.
const maxHops = 100

// continuedAs is the run that run runID of the workflow continued as
// ("" when it has not, or Temporal cannot say).
func continuedAs(ctx context.Context, c client.Client, workflowID, runID string) string {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	if !it.HasNext() {
		return ""
	}
	ev, err := it.Next()
	if err != nil {
		return ""
	}
	return ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
}

// Signal sends a control signal to the project's running workflow.
func Signal(ctx context.Context, c client.Client, workflowID string, ctl Control) error {
	if err := c.SignalWorkflow(ctx, workflowID, "", SignalName, ctl); err != nil {
		return fmt.Errorf("cannot reach the run %s: %w", workflowID, err)
	}
	return nil
}

// SignalAnswerTo answers the question the project's workflow waits on.
func SignalAnswerTo(ctx context.Context, c client.Client, workflowID string, a Answer) error {
	if err := c.SignalWorkflow(ctx, workflowID, "", SignalAnswer, a); err != nil {
		return fmt.Errorf("cannot reach the run %s: %w", workflowID, err)
	}
	return nil
}

// QueryStatusOf asks the project's workflow for its status, and
// Temporal for which worker holds each attempt in flight (FleetOf).
func QueryStatusOf(ctx context.Context, c client.Client, workflowID string) (Status, error) {
	var st Status
	v, err := c.QueryWorkflow(ctx, workflowID, "", QueryStatus)
	if err != nil {
		return st, fmt.Errorf("cannot ask the run %s: %w", workflowID, err)
	}
	if err := v.Get(&st); err != nil {
		return st, err
	}
	d, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return st, fmt.Errorf("cannot describe the run %s: %w", workflowID, err)
	}
	FleetOf(&st, d.GetPendingActivities())
	return st, nil
}

// FleetOf puts into st's tasks which worker holds each attempt in
// flight and where it is, from Temporal's pending activities: the
// workflow itself never learns where an activity runs. An attempt's last
// heartbeat names its task and worker; one sent before the attempt's
// latest start is a lost worker's, and an attempt not started waits for
// a worker to take it.
func FleetOf(st *Status, pending []*workflowpb.PendingActivityInfo) {
	where := map[string]remote.FleetTask{}
	dc := converter.GetDefaultDataConverter()
	for _, pa := range pending {
		if pa.GetActivityType().GetName() != AttemptName {
			continue
		}
		var b beat
		if pa.GetHeartbeatDetails() == nil || dc.FromPayloads(pa.GetHeartbeatDetails(), &b) != nil || b.Task == "" {
			continue
		}
		ft := remote.FleetTask{Worker: b.Worker, Phase: b.Phase}
		stale := pa.GetLastHeartbeatTime().AsTime().Before(pa.GetLastStartedTime().AsTime())
		switch {
		case pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED:
			ft = remote.FleetTask{Phase: "waiting for a worker"}
		case stale:
			ft = remote.FleetTask{Phase: "starting"}
		}
		where[b.Task] = ft
	}
	for i, t := range st.Tasks {
		if ft, ok := where[t.ID]; ok && t.State == planfile.TaskInProgress {
			st.Tasks[i].Worker, st.Tasks[i].Phase = ft.Worker, ft.Phase
		}
	}
}
