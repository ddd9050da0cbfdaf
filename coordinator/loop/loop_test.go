package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// fnWorker is a Worker from a function, for loop tests without a model.
type fnWorker func(ctx context.Context, t planfile.Task, attempt int) Outcome

func (f fnWorker) Work(ctx context.Context, a Assignment) Outcome {
	return f(ctx, a.Task, a.Attempt)
}

func taskProject(t *testing.T, tasks string) (string, afero.Fs) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, afero.NewOsFs()
}

func taskList(n int) string {
	var b strings.Builder
	b.WriteString("# Tasks\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "- [ ] task number %d\n", i)
	}
	return b.String()
}

func loadTasks(t *testing.T, fs afero.Fs, root string) *planfile.TaskFile {
	t.Helper()
	f, err := planfile.LoadTasks(fs, root)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestLoopTwentyTasksOneAlwaysFails(t *testing.T) {
	root, fs := taskProject(t, taskList(20))
	var attempts sync.Map
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 2, Backoff: time.Millisecond},
		Breaker: func(Stats) (bool, error) { return false, nil },
		Worker: fnWorker(func(_ context.Context, task planfile.Task, attempt int) Outcome {
			n, _ := attempts.LoadOrStore(task.Title, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			if task.Title == "task number 13" {
				return Outcome{Err: errors.New("compile error in 13")}
			}
			return Outcome{Completed: true, Summary: "did " + task.Title}
		}),
	})
	if !res.IsError || res.Reason != ReasonSomeFailed || len(res.Done) != 19 || len(res.Failed) != 1 {
		t.Fatalf("result = %+v", res)
	}
	f := loadTasks(t, fs, root)
	c := f.Counts()
	if c.Done != 19 || c.Failed != 1 || c.Open != 0 {
		t.Fatalf("counts = %+v", c)
	}
	bad, _ := f.Find(res.Failed[0])
	if bad.Title != "task number 13" || bad.Attempts != 3 {
		t.Fatalf("failed task = %+v", bad)
	}
	n, _ := attempts.Load("task number 13")
	if got := n.(*atomic.Int32).Load(); got != 3 {
		t.Fatalf("failing task tried %d times, want 3 (1 + 2 retries)", got)
	}
	progress, _ := os.ReadFile(filepath.Join(root, "RALPH_PROGRESS.md"))
	if strings.Count(string(progress), "\n## ") != 19 || !strings.Contains(string(progress), "did task number 7") {
		t.Fatalf("progress has %d entries:\n%s", strings.Count(string(progress), "\n## "), progress)
	}
	if res.Stats.Iterations != 22 || res.Stats.TasksDone != 19 || res.Stats.TasksFailed != 1 {
		t.Fatalf("stats = %+v", res.Stats)
	}
}

func TestLoopUntilStopsAfterFive(t *testing.T) {
	root, fs := taskProject(t, taskList(10))
	res := Run(context.Background(), Options{
		Fs: fs, Root: root,
		Until:  func(s Stats) (bool, error) { return s.TasksDone >= 5, nil },
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true} }),
	})
	if res.IsError || res.Reason != ReasonUntil || len(res.Done) != 5 {
		t.Fatalf("result = %+v", res)
	}
	if c := loadTasks(t, fs, root).Counts(); c.Done != 5 || c.Open != 5 {
		t.Fatalf("counts = %+v", c)
	}
}

func TestLoopParallelRespectsDependencies(t *testing.T) {
	root, fs := taskProject(t, "- [ ] a <!-- ralph:id=a -->\n- [ ] b <!-- ralph:id=b -->\n- [ ] c <!-- ralph:id=c -->\n- [ ] d <!-- ralph:id=d -->\n- [ ] e <!-- ralph:id=e -->\n- [ ] after all <!-- ralph:id=z depends=a,b,c,d,e -->\n")
	var now, peak atomic.Int32
	var mu sync.Mutex
	var order []string
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Parallel: 4},
		Worker: fnWorker(func(_ context.Context, task planfile.Task, _ int) Outcome {
			n := now.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			// The first attempts wait for each other (at most a few
			// seconds) rather than sleeping a fixed time, so a busy
			// machine that starts them slowly still sees all four at
			// once; a loop that starts fewer fails after the wait.
			for deadline := time.Now().Add(3 * time.Second); peak.Load() < 4 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			now.Add(-1)
			mu.Lock()
			order = append(order, task.ID)
			mu.Unlock()
			return Outcome{Completed: true}
		}),
	})
	if res.IsError || len(res.Done) != 6 {
		t.Fatalf("result = %+v", res)
	}
	if peak.Load() != 4 {
		t.Fatalf("peak concurrency %d, want 4", peak.Load())
	}
	if order[len(order)-1] != "z" {
		t.Fatalf("the dependent task ran before its dependencies: %v", order)
	}
}

func TestLoopCircuitBreakerAsksAPerson(t *testing.T) {
	// With a person to ask who says go on once, it runs three more, then
	// stops when they say no.
	root, fs := taskProject(t, taskList(5))
	asked, calls := 0, 0
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 10, Backoff: time.Millisecond},
		Ask: func(context.Context, string) bool { asked++; return asked == 1 },
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			calls++
			return Outcome{Err: errors.New("rate limited")}
		}),
	})
	if res.Reason != ReasonBreaker || asked != 2 || calls != 6 {
		t.Fatalf("result %+v, asked %d, calls %d", res, asked, calls)
	}
}

func TestLoopVerifyAndAbort(t *testing.T) {
	root, fs := taskProject(t, taskList(3))
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{OnError: OnErrorAbort},
		VerifyCommands: []string{"check"}, Verify: func(context.Context, Workspace, string) (bool, string) { return false, "FAIL: TestX" },
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true} }),
	})
	if res.Reason != ReasonAborted || !strings.Contains(res.Err.Error(), "verification failed: FAIL: TestX (`check` did not pass)") {
		t.Fatalf("result = %+v", res)
	}
	if c := loadTasks(t, fs, root).Counts(); c.Done != 0 || c.Failed != 1 || c.Open != 2 {
		t.Fatalf("counts = %+v", c)
	}
}

func TestLoopHardStopResetsInProgress(t *testing.T) {
	root, fs := taskProject(t, taskList(4))
	q := interrupts.NewQueue()
	started := make(chan struct{}, 4)
	res := make(chan Result, 1)
	go func() {
		res <- Run(context.Background(), Options{
			Fs: fs, Root: root, Policy: decide.Policy{Parallel: 2}, Queue: q,
			Worker: fnWorker(func(ctx context.Context, _ planfile.Task, _ int) Outcome {
				started <- struct{}{}
				<-ctx.Done()
				return Outcome{Err: ctx.Err()}
			}),
		})
	}()
	<-started
	<-started
	stopAt := time.Now()
	q.Push(interrupts.Interrupt{Kind: interrupts.HardStop})
	r := <-res
	// The workers wait for their context without end: seconds catch a
	// stop not kept (how fast a stop is, the e2e HardStop benchmark says).
	if r.Reason != ReasonInterrupted || time.Since(stopAt) > 5*time.Second {
		t.Fatalf("result = %+v after %s", r, time.Since(stopAt))
	}
	if c := loadTasks(t, fs, root).Counts(); c.InProgress != 0 || c.Open != 4 {
		t.Fatalf("counts after stop = %+v", c)
	}
}

func TestLoopStuckOnUnmetDependency(t *testing.T) {
	root, fs := taskProject(t, "- [ ] a <!-- ralph:id=a depends=nope -->\n")
	res := Run(context.Background(), Options{Fs: fs, Root: root,
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true} })})
	if res.Reason != ReasonStuck || !res.IsError {
		t.Fatalf("result = %+v", res)
	}
}

func TestLoopPauseAndResume(t *testing.T) {
	root, fs := taskProject(t, taskList(3))
	ctl := NewControl()
	if err := ctl.Pause(); !errors.Is(err, ErrNoLoop) {
		t.Fatalf("pausing with no loop: %v", err)
	}
	var calls atomic.Int32
	release := make(chan struct{})
	res := make(chan Result, 1)
	go func() {
		res <- Run(context.Background(), Options{
			Fs: fs, Root: root, Control: ctl,
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
				if calls.Add(1) == 1 {
					<-release
				}
				return Outcome{Completed: true}
			}),
		})
	}()
	waitUntil(t, func() bool { return calls.Load() == 1 })
	if err := ctl.Pause(); err != nil {
		t.Fatal(err)
	}
	close(release)
	time.Sleep(150 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Fatalf("a paused loop started %d more task(s)", n-1)
	}
	if c := loadTasks(t, fs, root).Counts(); c.Done != 1 || c.Open != 2 {
		t.Fatalf("counts while paused = %+v", c)
	}
	if err := ctl.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-res:
		if r.IsError || len(r.Done) != 3 {
			t.Fatalf("result = %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not finish after Resume")
	}
	if err := ctl.Resume(); !errors.Is(err, ErrNoLoop) {
		t.Fatalf("resuming a finished loop: %v", err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestLoopCostLimitAsksThenStops(t *testing.T) {
	root, fs := taskProject(t, taskList(6))
	cost := 1.0
	asked := 0
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, MaxCost: 2,
		Ask: func(_ context.Context, q string) bool {
			asked++
			if !strings.Contains(q, "cost limit of $2.00") && !strings.Contains(q, "cost limit of $4.00") {
				t.Errorf("question %q", q)
			}
			return asked == 1 // raise once, then stop
		},
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			return Outcome{Completed: true, CostUSD: &cost}
		}),
	})
	if res.Reason != ReasonMaxCost || !res.IsError || asked != 2 || len(res.Done) != 4 {
		t.Fatalf("result %+v after %d questions", res, asked)
	}
}

// A budget spent by the last task stops nothing: the loop ends with every
// task done and no error. A budget spent earlier stops the loop with the
// sub-cent amounts shown as they are.
func TestLoopCostLimitAfterTheLastTask(t *testing.T) {
	cost := 0.0003
	worker := fnWorker(func(context.Context, planfile.Task, int) Outcome {
		return Outcome{Completed: true, CostUSD: &cost}
	})
	root, fs := taskProject(t, taskList(2))
	res := Run(context.Background(), Options{Fs: fs, Root: root, MaxCost: 0.0005, Worker: worker})
	if res.Reason != ReasonAllDone || res.IsError || len(res.Done) != 2 {
		t.Fatalf("the last task spent the budget: %+v", res)
	}
	root, fs = taskProject(t, taskList(4))
	res = Run(context.Background(), Options{Fs: fs, Root: root, MaxCost: 0.0005, Worker: worker})
	if res.Reason != ReasonMaxCost || !res.IsError || len(res.Done) != 2 ||
		res.Err == nil || res.Err.Error() != "the cost limit of $0.0005 was reached ($0.0006)" {
		t.Fatalf("a budget spent with tasks left: %+v", res)
	}
}

// TestLoopAgreesWithStatus runs a task file full of traps and checks that
// the loop works its tasks in exactly the order that ralph status's
// Next would name them, and stops where Next has nothing left.
func TestLoopAgreesWithStatus(t *testing.T) {
	tricky := "# Tasks\n\n" +
		"- [ ] low priority, first in the file <!-- ralph:id=a priority=5 -->\n" +
		"- [ ] urgent, after a skipped task <!-- ralph:id=b priority=1 depends=s -->\n" +
		"- [-] skipped <!-- ralph:id=s -->\n" +
		"- [ ] most urgent, after a failed task <!-- ralph:id=c priority=0 depends=f -->\n" +
		"- [!] failed <!-- ralph:id=f -->\n" +
		"- [ ] <!-- ralph:priority=0 -->\n" +
		"- [ ] default priority <!-- ralph:id=d -->\n" +
		"- [ ] after a <!-- ralph:id=e priority=2 depends=a -->\n" +
		"  - [ ] urgent subtask <!-- ralph:id=g priority=1 -->\n" +
		"- [ ] no id yet <!-- ralph:priority=5 -->\n" +
		"- [ ] not a number <!-- ralph:id=h priority=high -->\n"

	// What status would say next, after each task it named was done.
	sim := planfile.ParseTasks([]byte(tricky))
	sim.AssignIDs(nil)
	var want []string
	for {
		n, ok := sim.Next()
		if !ok {
			break
		}
		want = append(want, n.Title)
		if err := sim.SetState(n.ID, planfile.TaskDone); err != nil {
			t.Fatal(err)
		}
	}
	if len(want) != 7 {
		t.Fatalf("the simulation ran %d tasks: %q", len(want), want)
	}

	root, fs := taskProject(t, tricky)
	var got []string
	res := Run(context.Background(), Options{
		Fs: fs, Root: root,
		Worker: fnWorker(func(_ context.Context, task planfile.Task, _ int) Outcome {
			got = append(got, task.Title)
			return Outcome{Completed: true}
		}),
	})
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("ralph run worked\n%q\nralph status would name\n%q", got, want)
	}
	if res.Reason != ReasonStuck || !res.IsError {
		t.Fatalf("result = %+v", res)
	}
	if n, ok := loadTasks(t, fs, root).Next(); ok {
		t.Fatalf("status would still name %+v after the run stopped", n)
	}
}

// TestLoopGivesIDsAtEveryBoundary appends tasks to the file while the loop
// runs, one without an id and one copying an id already in use: each gets
// an id of its own and runs exactly once.
func TestLoopGivesIDsAtEveryBoundary(t *testing.T) {
	root, fs := taskProject(t, taskList(2))
	var mu sync.Mutex
	runs := map[string]int{}
	ids := map[string]string{}
	var notices []string
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{MaxIterations: 20},
		Notify: func(s string) { notices = append(notices, s) },
		Worker: fnWorker(func(_ context.Context, task planfile.Task, _ int) Outcome {
			mu.Lock()
			defer mu.Unlock()
			runs[task.Title]++
			ids[task.Title] = task.ID
			if len(runs) == 1 {
				f, err := os.OpenFile(filepath.Join(root, memory.TasksFile), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					return Outcome{Err: err}
				}
				_, err = f.WriteString("- [ ] added during the run\n- [ ] copied <!-- ralph:id=t1 -->\n")
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return Outcome{Err: err}
				}
			}
			return Outcome{Completed: true}
		}),
	})
	if res.IsError || len(res.Done) != 4 || res.Stats.Iterations != 4 {
		t.Fatalf("result = %+v", res)
	}
	for _, title := range []string{"task number 1", "task number 2", "added during the run", "copied"} {
		if runs[title] != 1 {
			t.Errorf("%q ran %d times, want once (runs: %v)", title, runs[title], runs)
		}
	}
	if ids["added during the run"] != "t3" || ids["copied"] != "t4" {
		t.Errorf("ids = %v", ids)
	}
	want := `RALPH_TASKS.md line 6: task "copied" had the duplicate id t1; it is now t4.`
	if len(notices) != 1 || notices[0] != want {
		t.Errorf("notices = %q, want %q", notices, want)
	}
}

func TestLoopDuplicateIDsRunOnce(t *testing.T) {
	root, fs := taskProject(t, "- [ ] a <!-- ralph:id=t1 -->\n- [ ] b <!-- ralph:id=t1 -->\n- [ ] c <!-- ralph:id=t1 -->\n")
	runs := map[string]int{}
	var notices []string
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{MaxIterations: 90},
		Notify: func(s string) { notices = append(notices, s) },
		Worker: fnWorker(func(_ context.Context, task planfile.Task, _ int) Outcome {
			runs[task.Title]++
			return Outcome{Completed: true}
		}),
	})
	if res.IsError || res.Reason != ReasonAllDone || res.Stats.Iterations != 3 {
		t.Fatalf("result = %+v", res)
	}
	if runs["a"] != 1 || runs["b"] != 1 || runs["c"] != 1 {
		t.Fatalf("runs = %v", runs)
	}
	want := []string{
		`RALPH_TASKS.md line 2: task "b" had the duplicate id t1; it is now t2.`,
		`RALPH_TASKS.md line 3: task "c" had the duplicate id t1; it is now t3.`,
	}
	if strings.Join(notices, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notices = %q", notices)
	}
}

// failingStore is a Store whose SaveState always fails, as on a full disk.
type failingStore struct {
	statuses []string // the status each attempted save would have written
	err      error    // what a save fails with; errDiskFull when nil
}

var errDiskFull = errors.New("no space left on device")

func (s *failingStore) AppendMessages(...conversation.Message) error { return nil }
func (s *failingStore) AppendEvent(any) error                        { return nil }
func (s *failingStore) AppendTranscript(string) error                { return nil }
func (s *failingStore) AppendLog(string, any) error                  { return nil }
func (s *failingStore) SaveState(fn func(*memory.State)) error {
	var st memory.State
	fn(&st)
	s.statuses = append(s.statuses, st.Status)
	if s.err != nil {
		return s.err
	}
	return errDiskFull
}

func TestLoopUnsavedRecordIsAnError(t *testing.T) {
	root, fs := taskProject(t, taskList(2))
	store := &failingStore{}
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Store: store,
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true} }),
	})
	if !res.IsError || res.Reason != ReasonNotSaved || !errors.Is(res.Err, errDiskFull) || len(res.Done) != 2 {
		t.Fatalf("result = %+v", res)
	}
	if last := store.statuses[len(store.statuses)-1]; last != memory.StatusFailed {
		t.Fatalf("the final save would write status %q, want %q", last, memory.StatusFailed)
	}
	// A run that failed for its own reason keeps that reason and adds the
	// lost record to its error.
	root, fs = taskProject(t, taskList(1))
	res = Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{OnError: OnErrorAbort}, Store: &failingStore{},
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Err: errors.New("boom")} }),
	})
	if res.Reason != ReasonAborted || !errors.Is(res.Err, errDiskFull) || !strings.Contains(res.Err.Error(), "boom") {
		t.Fatalf("result = %+v", res)
	}
}
