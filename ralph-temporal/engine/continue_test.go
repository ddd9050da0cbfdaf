package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// activities counts the activities run on the remote so far.
func (r *fakeRemote) activities() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.integrations + len(r.starts)
}

// chainResult is a run followed through every run it continued as.
type chainResult struct {
	res    RunResult
	runs   int
	events []event.Event
}

// chain runs the workflow from in on r, and each run it continues as in
// a new test environment, as Temporal starts the next run. Its history
// length is its activities (the test environment counts no history), so
// in.ContinueAfterEvents is a number of activities per run; 0 never
// continues.
func chain(t *testing.T, r *fakeRemote, in RunInput, attempt func(context.Context, AttemptInput) (AttemptOutcome, error)) chainResult {
	t.Helper()
	var out chainResult
	var clock time.Time
	for {
		out.runs++
		if out.runs > 100 {
			t.Fatal("the run continued as new a hundred times")
		}
		var history func(workflow.Context) int
		if in.ContinueAfterEvents > 0 {
			from := r.activities()
			history = func(workflow.Context) int { return r.activities() - from }
		}
		e := newEnvOn(t, r, nil, attempt, history)
		if !clock.IsZero() {
			// Temporal's clock goes on across runs; each test
			// environment's starts at the wall clock's.
			e.SetStartTime(clock)
		}
		e.ExecuteWorkflow(WorkflowName, in)
		if !e.IsWorkflowCompleted() {
			t.Fatal("the workflow did not complete")
		}
		var page EventPage
		v, err := e.QueryWorkflow(QueryEvents, 0)
		if err != nil || v.Get(&page) != nil {
			t.Fatal(err)
		}
		if first := page.Next - len(page.Events); first != len(out.events) {
			t.Fatalf("run %d numbers its events from %d, after %d events", out.runs, first, len(out.events))
		}
		out.events = append(out.events, page.Events...)
		clock = e.Now()
		var can *workflow.ContinueAsNewError
		if err := e.GetWorkflowError(); errors.As(err, &can) {
			in = RunInput{}
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
				t.Fatal(err)
			}
			continue
		}
		out.res = e.result(t)
		return out
	}
}

// TestWorkflowContinuedAsNewEndsAsOneRunWould: 50 tasks, some failing
// once and one failing for good, run once in one run and once in runs
// that continue as new every few tasks, end alike: the same result,
// counters, task file, attempts started and decisions, with the events
// numbered on across runs and one session id.
func TestWorkflowContinuedAsNewEndsAsOneRunWould(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	sb.WriteString("# Tasks\n\n")
	for i := range 50 {
		fmt.Fprintf(&sb, "- [ ] task %d <!-- ralph:id=t%02d -->\n", i, i)
	}
	attempt := func(_ context.Context, in AttemptInput) (AttemptOutcome, error) {
		n, _ := strconv.Atoi(strings.TrimPrefix(in.Task.ID, "t"))
		if in.Task.ID == "t13" || (n%7 == 0 && in.Attempt == 1) {
			return AttemptOutcome{Failure: "no luck with " + in.Task.ID}, nil
		}
		return AttemptOutcome{Completed: true, Summary: "did " + in.Task.ID}, nil
	}
	in := input(decide.Policy{Parallel: 1, Retries: 2, MaxIterations: 1000})
	once := &fakeRemote{file: planfile.ParseTasks([]byte(sb.String()))}
	one := chain(t, once, in, attempt)
	in.ContinueAfterEvents = 12
	often := &fakeRemote{file: planfile.ParseTasks([]byte(sb.String()))}
	many := chain(t, often, in, attempt)

	t.Logf("%d runs", many.runs)
	if one.runs != 1 || many.runs < 4 {
		t.Fatalf("%d and %d runs, want 1 and at least 4", one.runs, many.runs)
	}
	a, b := one.res, many.res
	if a.Reason != b.Reason || a.IsError != b.IsError || a.Iterations != b.Iterations || a.Counts != b.Counts || a.Usage != b.Usage ||
		!slices.Equal(a.Done, b.Done) || !slices.Equal(a.Failed, b.Failed) {
		t.Errorf("continued run's result\n%+v\nwant\n%+v", b, a)
	}
	if len(a.Done) != 49 || !slices.Equal(a.Failed, []string{"t13"}) {
		t.Errorf("done %d, failed %v; want 49 and t13", len(a.Done), a.Failed)
	}
	if x, y := string(once.file.Bytes()), string(often.file.Bytes()); x != y {
		t.Errorf("task file\n%s\nwant\n%s", y, x)
	}
	if !slices.Equal(once.starts, often.starts) || !slices.Equal(once.progress, often.progress) {
		t.Errorf("starts %v and progress %v, want %v and %v", often.starts, often.progress, once.starts, once.progress)
	}
	if x, y := decisionsOf(one.events), decisionsOf(many.events); !slices.Equal(x, y) {
		t.Errorf("decisions\n%q\nwant\n%q", y, x)
	}
	for _, ev := range many.events {
		if ev.SessionID != b.SessionID {
			t.Fatalf("an event of session %q in session %q", ev.SessionID, b.SessionID)
		}
	}
	// Each retry is told how the attempt before failed, across runs.
	for _, ai := range often.inputs {
		if ai.Attempt > 1 && ai.LastError == "" {
			t.Errorf("%s's attempt %d was not told how the last failed", ai.Task.ID, ai.Attempt)
		}
	}
}

// decisionsOf is the decisions events carry, as "kind task: detail
// (reason)".
func decisionsOf(events []event.Event) []string {
	var out []string
	for _, ev := range events {
		if d := ev.Decision; ev.Type == event.Decision && d != nil {
			out = append(out, fmt.Sprintf("%s %s: %s (%s)", d.Kind, d.Task, d.Detail, d.Reason))
		}
	}
	return out
}

// TestWorkflowContinuesAsNewOnlyWithNothingInFlight: with three tasks at
// once, a run whose history is full starts none and continues once those
// in flight are done, so none is lost or run twice.
func TestWorkflowContinuesAsNewOnlyWithNothingInFlight(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	sb.WriteString("# Tasks\n\n")
	for i := range 30 {
		fmt.Fprintf(&sb, "- [ ] task %d <!-- ralph:id=t%02d -->\n", i, i)
	}
	attempt := func(_ context.Context, in AttemptInput) (AttemptOutcome, error) {
		if in.Task.ID == "t05" && in.Attempt == 1 {
			return AttemptOutcome{Failure: "no luck"}, nil
		}
		return AttemptOutcome{Completed: true, Summary: "did " + in.Task.ID}, nil
	}
	in := input(decide.Policy{Parallel: 3, Retries: 2, MaxIterations: 1000})
	in.ContinueAfterEvents = 10
	r := &fakeRemote{file: planfile.ParseTasks([]byte(sb.String()))}
	got := chain(t, r, in, attempt)
	if got.runs < 3 {
		t.Errorf("%d runs, want at least 3", got.runs)
	}
	if got.res.IsError || len(got.res.Done) != 30 || got.res.Iterations != 31 || got.res.Counts.Done != 30 {
		t.Errorf("result %+v, want 30 tasks done in 31 attempts", got.res)
	}
	seen := map[string]int{}
	for _, id := range r.starts {
		seen[id]++
	}
	for id, n := range seen {
		if want := 1 + btoi(id == "t05"); n != want {
			t.Errorf("%s started %d times, want %d", id, n, want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestWorkflowContinuesAsNewOnlyAfterAnAttempt: a limit under what a
// run's start costs makes each run work one task before it continues,
// not continue for ever.
func TestWorkflowContinuesAsNewOnlyAfterAnAttempt(t *testing.T) {
	t.Parallel()
	tasks := "# Tasks\n\n- [ ] a <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n- [ ] c <!-- ralph:id=c -->\n"
	in := input(decide.Policy{Parallel: 1})
	in.ContinueAfterEvents = 1
	r := &fakeRemote{file: planfile.ParseTasks([]byte(tasks))}
	got := chain(t, r, in, func(context.Context, AttemptInput) (AttemptOutcome, error) {
		return AttemptOutcome{Completed: true}, nil
	})
	if got.runs != 4 || len(got.res.Done) != 3 {
		t.Errorf("%d runs, %v done; want a task a run, then a run that ends", got.runs, got.res.Done)
	}
}

// TestWorkflowCarriesWhatPeopleSentAcrossContinueAsNew: a pause and an
// answer sent while a task runs, at the boundary where the run
// continues, reach the next run, which starts paused and goes on only
// when a person continues it.
func TestWorkflowCarriesWhatPeopleSentAcrossContinueAsNew(t *testing.T) {
	t.Parallel()
	tasks := "# Tasks\n\n- [ ] a <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n"
	r := &fakeRemote{file: planfile.ParseTasks([]byte(tasks))}
	var e env
	attempt := func(_ context.Context, in AttemptInput) (AttemptOutcome, error) {
		if in.Task.ID == "a" {
			// The test environment takes signals from any goroutine,
			// in order with the attempt's end.
			e.SignalWorkflow(SignalName, Control{Op: remote.OpPause})
			e.SignalWorkflow(SignalAnswer, Answer{Yes: true})
		}
		return AttemptOutcome{Completed: true}, nil
	}
	from := r.activities()
	e = newEnvOn(t, r, nil, attempt, func(workflow.Context) int { return r.activities() - from })
	in := input(decide.Policy{Parallel: 1})
	in.ContinueAfterEvents = 2
	e.ExecuteWorkflow(WorkflowName, in)
	var can *workflow.ContinueAsNewError
	if err := e.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("the run ended with %v, not continuing as new", err)
	}
	var next RunInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	c := next.Continued
	if c == nil || !c.Machine.Paused || !slices.Equal(c.Answers, []Answer{{Yes: true}}) || !slices.Equal(c.Machine.Done, []string{"a"}) ||
		c.SessionID == "" || c.EventBase == 0 || c.Runs != 1 {
		t.Fatalf("carried %+v", c)
	}
	e2 := newEnvOn(t, r, nil, attempt, nil)
	e2.RegisterDelayedCallback(func() {
		var st Status
		v, err := e2.QueryWorkflow(QueryStatus)
		if err != nil || v.Get(&st) != nil || st.Status != memory.StatusPaused || st.SessionID != c.SessionID {
			t.Errorf("the next run's status %+v (%v), want paused in session %s", st, err, c.SessionID)
		}
		e2.SignalWorkflow(SignalName, Control{Op: remote.OpContinue})
	}, time.Hour)
	e2.ExecuteWorkflow(WorkflowName, next)
	res := e2.result(t)
	if !slices.Equal(res.Done, []string{"a", "b"}) || res.SessionID != c.SessionID {
		t.Errorf("result %+v", res)
	}
}
