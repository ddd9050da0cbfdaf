package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/loop/decide/scenarios"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/agents"
)

// fakeRemote stands in for the target branch: the integration activity
// writes its task file, as the real one writes RALPH_TASKS.md there.
type fakeRemote struct {
	mu       sync.Mutex
	file     *planfile.TaskFile
	starts   []string
	inputs   []AttemptInput
	progress []string
	// bodies are the progress entries' bodies, by task.
	bodies map[string]string
	// integrations counts the integrations run.
	integrations int
}

func (r *fakeRemote) integrate(_ context.Context, in IntegrateInput) (IntegrateResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.integrations++
	before := string(r.file.Bytes())
	r.file.AssignIDs(nil)
	for _, u := range in.Updates {
		if err := r.file.SetState(u.ID, u.State); err != nil {
			return IntegrateResult{}, err
		}
		if u.Attempts > 0 {
			_ = r.file.SetMeta(u.ID, "attempts", strconv.Itoa(u.Attempts))
		}
		if u.Progress != nil {
			r.progress = append(r.progress, u.ID)
			if r.bodies == nil {
				r.bodies = map[string]string{}
			}
			r.bodies[u.ID] = u.Progress.Body
		}
	}
	// As the real integration answers: a diff from the file the
	// workflow holds when the branch's is that one.
	if in.Base != "" && taskHash(before) == in.Base {
		d := diffTasks(before, string(r.file.Bytes()))
		return IntegrateResult{Diff: &d}, nil
	}
	return IntegrateResult{Tasks: string(r.file.Bytes())}, nil
}

// seen is what the attempts saw so far: the tasks they started, in
// order, and their inputs.
func (r *fakeRemote) seen() ([]string, []AttemptInput) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.starts), slices.Clone(r.inputs)
}

func (r *fakeRemote) started(in AttemptInput) {
	r.mu.Lock()
	r.starts = append(r.starts, in.Task.ID)
	r.inputs = append(r.inputs, in)
	r.mu.Unlock()
}

type env struct {
	*testsuite.TestWorkflowEnvironment
	remote *fakeRemote
}

// newEnv is the SDK's in-process test environment with the workflow, the
// fake remote's integration and attempt as the activity.
func newEnv(t *testing.T, tasks string, cond Conditions, attempt func(ctx context.Context, in AttemptInput) (AttemptOutcome, error)) env {
	t.Helper()
	return newEnvOn(t, &fakeRemote{file: planfile.ParseTasks([]byte(tasks))}, cond, attempt, nil)
}

// newEnvOn is newEnv on the remote r, with the workflow counting its
// history with historyLength (nil: Temporal's count, which the test
// environment leaves at 0).
func newEnvOn(t *testing.T, r *fakeRemote, cond Conditions, attempt func(ctx context.Context, in AttemptInput) (AttemptOutcome, error), historyLength func(workflow.Context) int) env {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(testLogger{t})
	e := s.NewTestWorkflowEnvironment()
	e.SetTestTimeout(time.Minute)
	if cond == nil {
		cond = func(string, string) (loop.Condition, error) {
			return func(loop.Stats) (bool, error) { return false, nil }, nil
		}
	}
	e.RegisterWorkflowWithOptions(taskLoop(cond, historyLength), workflow.RegisterOptions{Name: WorkflowName})
	e.RegisterActivityWithOptions(r.integrate, activity.RegisterOptions{Name: IntegrateName})
	e.RegisterActivityWithOptions(func(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
		r.started(in)
		return attempt(ctx, in)
	}, activity.RegisterOptions{Name: AttemptName})
	return env{e, r}
}

// input is a run whose configuration holds the scenario's policy.
func input(p decide.Policy) RunInput {
	rc := memory.RunConfig{MaxIterations: p.MaxIterations, Parallel: p.Parallel, OnError: p.OnError, Retries: p.Retries,
		BreakerCooldown: memory.Duration(p.BreakerCooldown), TaskTimeout: memory.Duration(time.Minute), Breaker: "scenario"}
	return RunInput{Project: Project{Remote: "file:///remote.git", Branch: "main"}, Run: rc, Backoff: p.Backoff}
}

func (e env) result(t *testing.T) RunResult {
	t.Helper()
	if !e.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RunResult
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestWorkflowScenarios runs the table the local loop's TestLoopScenarios
// runs: the same cases, the same expectations.
func TestWorkflowScenarios(t *testing.T) {
	for _, sc := range scenarios.All {
		t.Run(sc.Name, func(t *testing.T) {
			cond := func(string, string) (loop.Condition, error) {
				return func(s loop.Stats) (bool, error) {
					return sc.Breaker != nil && sc.Breaker(s.NoProgress, s.SameErrorRepeats), nil
				}, nil
			}
			e := newEnv(t, sc.Tasks, cond, func(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
				// The agent's result as the local loop's test scripts
				// it, reported as the attempt activity reports it.
				id := in.Task.ID
				var res loop.Outcome
				done, failure := sc.Result(id, in.Attempt)
				switch {
				case sc.Limited(id, in.Attempt):
					// The limit resets LimitReset after the attempt, on
					// the workflow's clock (the test environment's).
					res.Err = &agents.UsageLimitError{Agent: scenarios.LimitAgent,
						UsageLimit: agents.UsageLimit{Until: activity.GetInfo(ctx).StartedTime.Add(scenarios.LimitReset), Text: scenarios.LimitError}}
				case !done:
					res.Err = errors.New(failure)
				default:
					res = loop.Outcome{Completed: true, Summary: "did " + id}
					if sc.Costly(id, in.Attempt) {
						cost := scenarios.CostUSD
						res.Usage, res.CostUSD = scenarios.Spent, &cost
					}
				}
				var out AttemptOutcome
				r := loop.Reported(in.Task, in.Attempt, res)
				out.take(r)
				if r.Err == "" && r.Completed && sc.Verifies() {
					verify := func(context.Context, loop.Workspace, string) (bool, string) { return sc.Verified(id, in.Attempt) }
					run, output, failed := loop.RunChecks(ctx, verify, loop.Workspace{}, []string{scenarios.VerifyCommand})
					out.checked(r, run, output, failed)
				}
				return out, nil
			})
			in := input(sc.Policy)
			in.MaxWait, in.Ask = sc.MaxWait, sc.Ask
			e.ExecuteWorkflow(WorkflowName, in)
			res := e.result(t)
			if res.Reason != sc.Reason || res.IsError != sc.IsError {
				t.Fatalf("reason %q (error %v), want %q (error %v): %s", res.Reason, res.IsError, sc.Reason, sc.IsError, res.Error)
			}
			if !slices.Equal(res.Done, sc.Done) || !slices.Equal(res.Failed, sc.Failed) {
				t.Fatalf("done %v failed %v, want %v and %v", res.Done, res.Failed, sc.Done, sc.Failed)
			}
			if starts, _ := e.remote.seen(); !slices.Equal(starts, sc.Starts) {
				t.Fatalf("starts %v, want %v", starts, sc.Starts)
			}
			for _, task := range e.remote.file.Tasks() {
				if task.Attempts != sc.Attempts[task.ID] {
					t.Errorf("task %s: %d attempts on the branch, want %d", task.ID, task.Attempts, sc.Attempts[task.ID])
				}
			}
			if !slices.Equal(e.remote.progress, sc.Done) {
				t.Errorf("progress entries for %v, want %v", e.remote.progress, sc.Done)
			}
			if got := e.decisions(t); sc.Decisions != nil && !slices.Equal(got, sc.Decisions) {
				t.Errorf("decisions\n%q\nwant\n%q", got, sc.Decisions)
			}
			for _, wrong := range sc.WrongReasons(e.reasons(t)) {
				t.Error(wrong)
			}
			for id, want := range sc.Progress {
				if got := e.remote.bodies[id]; got != want {
					t.Errorf("progress of %s %q, want %q", id, got, want)
				}
			}
		})
	}
}

// decisions are the decision records the workflow's events carry, as
// "kind task" ("kind" when about no task), in order.
func (e env) decisions(t *testing.T) []string {
	t.Helper()
	var page EventPage
	v, err := e.QueryWorkflow(QueryEvents, 0)
	if err != nil || v.Get(&page) != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range page.Events {
		if d := ev.Decision; ev.Type == event.Decision && d != nil {
			out = append(out, strings.TrimSpace(d.Kind+" "+d.Task))
		}
	}
	return out
}

// reasons are the reasons of the workflow's decisions, the first of
// each "kind task".
func (e env) reasons(t *testing.T) map[string]string {
	t.Helper()
	var page EventPage
	v, err := e.QueryWorkflow(QueryEvents, 0)
	if err != nil || v.Get(&page) != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ev := range page.Events {
		if d := ev.Decision; ev.Type == event.Decision && d != nil {
			if k := strings.TrimSpace(d.Kind + " " + d.Task); out[k] == "" {
				out[k] = d.Reason
			}
		}
	}
	return out
}

// blockUntilCancelled is an attempt that works until it is cancelled, as
// an agent does until ralph stop.
func blockUntilCancelled(ctx context.Context, _ AttemptInput) (AttemptOutcome, error) {
	<-ctx.Done()
	return AttemptOutcome{}, ctx.Err()
}

func TestWorkflowStopCancelsEveryAttempt(t *testing.T) {
	tasks := "# Tasks\n\n- [ ] a <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n- [ ] c <!-- ralph:id=c -->\n"
	e := newEnv(t, tasks, nil, blockUntilCancelled)
	e.RegisterDelayedCallback(func() {
		var st Status
		v, err := e.QueryWorkflow(QueryStatus)
		if err != nil || v.Get(&st) != nil || !slices.Equal(st.Running, []string{"a", "b"}) || st.Status != memory.StatusRunning {
			t.Errorf("status before the stop: %+v (%v)", st, err)
		}
		e.SignalWorkflow(SignalName, Control{Op: remote.OpStop})
	}, 100*time.Millisecond)
	e.ExecuteWorkflow(WorkflowName, input(decide.Policy{Parallel: 2}))
	res := e.result(t)
	if res.Reason != decide.ReasonInterrupted || !res.IsError || len(res.Done) != 0 {
		t.Fatalf("%+v", res)
	}
	// Both start at once, in either order.
	if starts, _ := e.remote.seen(); !slices.Equal(slices.Sorted(slices.Values(starts)), []string{"a", "b"}) {
		t.Fatalf("starts %v", starts)
	}
	// Nothing was written for the stopped attempts: both are open.
	if c := e.remote.file.Counts(); c.Open != 3 {
		t.Fatalf("counts %+v", c)
	}
}

func TestWorkflowSayReachesTheRunningAttemptsAndStatusAnswers(t *testing.T) {
	tasks := "# Tasks\n\n- [ ] a <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n"
	release := make(chan struct{})
	e := newEnv(t, tasks, nil, func(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
		if in.Task.ID == "a" {
			select {
			case <-release:
			case <-ctx.Done():
				return AttemptOutcome{}, ctx.Err()
			}
		}
		return AttemptOutcome{Completed: true, Summary: "ok"}, nil
	})
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(SignalName, Control{Op: remote.OpSay, Text: "use the helper"})
	}, 100*time.Millisecond)
	e.RegisterDelayedCallback(func() {
		var page MessagePage
		v, err := e.QueryWorkflow(QueryMessages, 0)
		if err != nil || v.Get(&page) != nil || len(page.Messages) != 1 || page.Messages[0].Text != "use the helper" || page.Next != 1 {
			t.Errorf("messages %+v (%v)", page, err)
		}
		var st Status
		v, err = e.QueryWorkflow(QueryStatus)
		if err != nil || v.Get(&st) != nil || !slices.Equal(st.Running, []string{"a"}) || st.Iterations != 1 || st.Counts.Open != 2 {
			t.Errorf("status %+v (%v)", st, err)
		}
		close(release)
	}, 300*time.Millisecond)
	e.ExecuteWorkflow(WorkflowName, input(decide.Policy{}))
	res := e.result(t)
	if res.Reason != decide.ReasonAllDone || res.IsError || !slices.Equal(res.Done, []string{"a", "b"}) {
		t.Fatalf("%+v", res)
	}
	// a was running when the message came, so b, started after, does not
	// get it again.
	if _, inputs := e.remote.seen(); len(inputs) != 2 || inputs[0].MessagesFrom != 0 || inputs[1].MessagesFrom != 1 {
		t.Fatalf("inputs %+v", inputs)
	}
	var page EventPage
	v, err := e.QueryWorkflow(QueryEvents, 0)
	if err != nil || v.Get(&page) != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, ev := range page.Events {
		if ev.Type == event.TaskChanged {
			changes = append(changes, ev.Text)
		}
	}
	if want := []string{"a in_progress", "a done", "b in_progress", "b done"}; !slices.Equal(changes, want) {
		t.Fatalf("task events %v, want %v", changes, want)
	}
}

func TestWorkflowPauseHoldsNewTasks(t *testing.T) {
	tasks := "# Tasks\n\n- [ ] a <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n"
	e := newEnv(t, tasks, nil, func(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
		return AttemptOutcome{Completed: true}, nil
	})
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalName, Control{Op: remote.OpPause}) }, 0)
	e.RegisterDelayedCallback(func() {
		var st Status
		v, err := e.QueryWorkflow(QueryStatus)
		if starts, _ := e.remote.seen(); err != nil || v.Get(&st) != nil || st.Status != memory.StatusPaused || len(starts) > 1 {
			t.Errorf("paused: %+v starts %v (%v)", st, starts, err)
		}
		e.SignalWorkflow(SignalName, Control{Op: remote.OpContinue})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, input(decide.Policy{}))
	if res := e.result(t); res.Reason != decide.ReasonAllDone || len(res.Done) != 2 {
		t.Fatalf("%+v", res)
	}
}

func TestWorkflowConfigErrorStopsTheRun(t *testing.T) {
	tasks := "# Tasks\n\n- [ ] a <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n"
	e := newEnv(t, tasks, nil, func(context.Context, AttemptInput) (AttemptOutcome, error) {
		return AttemptOutcome{Failure: "no API key", ErrKind: ErrKindConfig}, nil
	})
	e.ExecuteWorkflow(WorkflowName, input(decide.Policy{}))
	res := e.result(t)
	if starts, _ := e.remote.seen(); res.Reason != ReasonConfig || !res.IsError || len(starts) != 1 || e.remote.file.Counts().Open != 2 {
		t.Fatalf("%+v starts %v", res, starts)
	}
}

// testLogger keeps the SDK's warnings and errors in the test's log.
type testLogger struct{ t *testing.T }

func (testLogger) Debug(string, ...any)          {}
func (testLogger) Info(string, ...any)           {}
func (l testLogger) Warn(msg string, kv ...any)  { l.t.Log("warn: " + msg + kvText(kv)) }
func (l testLogger) Error(msg string, kv ...any) { l.t.Log("error: " + msg + kvText(kv)) }

func TestWorkflowWithoutTasksSaysSo(t *testing.T) {
	e := newEnv(t, "", nil, func(context.Context, AttemptInput) (AttemptOutcome, error) {
		t.Error("no attempt may start")
		return AttemptOutcome{}, nil
	})
	e.ExecuteWorkflow(WorkflowName, input(decide.Policy{}))
	if res := e.result(t); res.Reason != ReasonNoTasks || !res.IsError || !strings.Contains(res.Error, "RALPH_TASKS.md on main has no tasks") {
		t.Fatalf("%+v", res)
	}
}

func TestWorkflowRetryIsToldHowTheLastAttemptFailed(t *testing.T) {
	tasks := "# Tasks\n\n- [ ] flaky <!-- ralph:id=f -->\n"
	e := newEnv(t, tasks, nil, func(_ context.Context, in AttemptInput) (AttemptOutcome, error) {
		if in.Attempt == 1 {
			return AttemptOutcome{Failure: "verification failed: 2 tests fail", Summary: "changed a.go"}, nil
		}
		return AttemptOutcome{Completed: true}, nil
	})
	e.ExecuteWorkflow(WorkflowName, input(decide.Policy{Retries: 1}))
	if res := e.result(t); res.Reason != decide.ReasonAllDone || res.IsError {
		t.Fatalf("%+v", res)
	}
	_, inputs := e.remote.seen()
	if len(inputs) != 2 || inputs[0].LastError != "" || inputs[1].LastError != "verification failed: 2 tests fail" || inputs[1].LastSummary != "changed a.go" {
		t.Fatalf("inputs %+v", inputs)
	}
}

// TestWorkflowAskTakesTheAnswerSignal: with someone to ask, a tripped
// breaker waits for the answer signal; yes goes on, as a local person's
// yes does, and the decisions say who decided.
func TestWorkflowAskTakesTheAnswerSignal(t *testing.T) {
	tasks := "# Tasks\n\n- [ ] shaky <!-- ralph:id=s -->\n- [ ] later <!-- ralph:id=l depends=s -->\n"
	cond := func(string, string) (loop.Condition, error) {
		return func(s loop.Stats) (bool, error) { return s.NoProgress >= 1, nil }, nil
	}
	e := newEnv(t, tasks, cond, func(_ context.Context, in AttemptInput) (AttemptOutcome, error) {
		if in.Task.ID == "s" && in.Attempt == 1 {
			return AttemptOutcome{Failure: "down"}, nil
		}
		return AttemptOutcome{Completed: true}, nil
	})
	e.RegisterDelayedCallback(func() {
		var st Status
		if v, err := e.QueryWorkflow(QueryStatus); err != nil || v.Get(&st) != nil || len(st.Running) != 0 {
			t.Errorf("status while asking: %+v (%v)", st, err)
		}
		e.SignalWorkflow(SignalAnswer, Answer{Yes: true})
	}, time.Minute)
	in := input(decide.Policy{Retries: 1, Backoff: time.Millisecond})
	in.Ask = true
	e.ExecuteWorkflow(WorkflowName, in)
	if res := e.result(t); res.Reason != decide.ReasonAllDone || !slices.Equal(res.Done, []string{"s", "l"}) {
		t.Fatalf("%+v", res)
	}
	want := []string{"task_picked s", "task_retry s", "breaker s", "breaker_go_on", "task_picked s", "task_picked l"}
	if got := e.decisions(t); !slices.Equal(got, want) {
		t.Fatalf("decisions %q, want %q", got, want)
	}
}
