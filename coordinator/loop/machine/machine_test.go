package machine

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide/scenarios"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// sim is the smallest host of the machine: a task file in memory, a
// clock it moves itself, and attempts that end as the scenario says, one
// at a time in the order they started. It shows the machine alone
// decides the scenarios, with no goroutine and no clock of its own.
type sim struct {
	t         *testing.T
	sc        scenarios.Scenario
	m         *Machine
	f         *planfile.TaskFile
	now       time.Time
	starts    []string
	decisions []string
	running   []Effect
	kinds     map[Kind]int
	reasons   map[string]string // the first decision's of each "kind task"
	progress  map[string]string // done tasks' progress entries' bodies
}

func (h *sim) apply(s Step) {
	for _, e := range s.Effects {
		h.kinds[e.Kind]++
		switch e.Kind {
		case Start:
			h.starts = append(h.starts, e.Task.ID)
			h.must(h.f.SetState(e.Task.ID, planfile.TaskInProgress))
			h.must(h.f.SetMeta(e.Task.ID, "attempts", strconv.Itoa(e.Attempt)))
			h.running = append(h.running, e)
		case Commit:
			h.must(h.f.SetState(e.Task.ID, e.State))
		case Record:
			d := e.Decision.Kind
			if e.Decision.Task != "" {
				d += " " + e.Decision.Task
			}
			h.decisions = append(h.decisions, d)
			if _, ok := h.reasons[d]; !ok {
				h.reasons[d] = e.Decision.Reason
			}
		case Emit, Save, Ask:
		default:
			h.t.Fatalf("effect kind %v has no case", e.Kind)
		}
	}
}

func (h *sim) must(err error) {
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *sim) run() *End {
	for range 1000 {
		s := h.m.Next(h.now, h.f)
		h.apply(s)
		switch {
		case s.End != nil:
			return s.End
		case s.Asking:
			// Nobody answers: the question's default.
			s = h.m.Answer(h.now, false, false)
			h.apply(s)
			if s.End != nil {
				return s.End
			}
			continue
		case len(h.running) > 0:
			e := h.running[0]
			h.running = h.running[1:]
			h.now = h.now.Add(time.Millisecond)
			// The attempt reports as the hosts' attempts do, and the
			// settlement they call decides how it ended.
			id := e.Task.ID
			r := Report{Task: e.Task, Attempt: e.Attempt, Summary: "did " + id}
			done, failure := h.sc.Result(id, e.Attempt)
			switch {
			case h.sc.Limited(id, e.Attempt):
				r.Err = "the " + scenarios.LimitAgent + " agent hit its usage limit: " + scenarios.LimitError
				r.Limit = &LimitSeen{Kind: memory.WaitUsageLimit, Agent: scenarios.LimitAgent, Until: h.now.Add(scenarios.LimitReset)}
			case !done:
				r.Err = failure
			default:
				r.Completed = true
				if h.sc.Costly(id, e.Attempt) {
					cost := scenarios.CostUSD
					r.Usage, r.CostUSD = scenarios.Spent, &cost
				}
				if h.sc.Verifies() {
					ok, out := h.sc.Verified(id, e.Attempt)
					r.Verify, r.VerifyFailed, r.VerifyOutput = &event.VerifyRun{OK: ok, Output: out}, scenarios.VerifyCommand, out
					if ok {
						r.VerifyFailed = ""
					}
				}
			}
			o := Settle(r)
			if o.Passed() {
				h.must(h.f.SetState(id, planfile.TaskDone))
				h.progress[id] = o.Progress(h.now, "s", 1).Body
				o = o.Counted()
			}
			s = h.m.Finished(h.now, h.f, o)
			h.apply(s)
			if s.End != nil {
				return s.End
			}
		case s.Wait > 0:
			h.now = h.now.Add(s.Wait)
		default:
			h.t.Fatalf("the machine neither ends, waits nor runs anything")
		}
	}
	h.t.Fatal("no end after 1000 steps")
	return nil
}

// TestMachineScenarios runs the table both hosts run on the machine
// alone.
func TestMachineScenarios(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios.All {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			cfg := Config{Policy: sc.Policy, MaxWait: sc.MaxWait, CanAsk: sc.Ask}
			if sc.Breaker != nil {
				cfg.Breaker = func(s Stats) (bool, error) { return sc.Breaker(s.NoProgress, s.SameErrorRepeats), nil }
			}
			f := planfile.ParseTasks([]byte(sc.Tasks))
			f.AssignIDs(nil)
			h := &sim{t: t, sc: sc, m: New(cfg, now), f: f, now: now, kinds: map[Kind]int{}, reasons: map[string]string{}, progress: map[string]string{}}
			end := h.run()
			if end.Reason != sc.Reason || end.IsError != sc.IsError {
				t.Fatalf("reason %q (error %v), want %q (error %v): %v", end.Reason, end.IsError, sc.Reason, sc.IsError, end.Err)
			}
			if !slices.Equal(h.m.Done(), sc.Done) || !slices.Equal(h.m.Failed(), sc.Failed) {
				t.Fatalf("done %v failed %v, want %v and %v", h.m.Done(), h.m.Failed(), sc.Done, sc.Failed)
			}
			if !slices.Equal(h.starts, sc.Starts) {
				t.Fatalf("starts %v, want %v", h.starts, sc.Starts)
			}
			for _, task := range h.f.Tasks() {
				if task.Attempts != sc.Attempts[task.ID] {
					t.Errorf("task %s: %d attempts, want %d", task.ID, task.Attempts, sc.Attempts[task.ID])
				}
			}
			if sc.Decisions != nil && !slices.Equal(h.decisions, sc.Decisions) {
				t.Errorf("decisions\n%q\nwant\n%q", h.decisions, sc.Decisions)
			}
			for _, wrong := range sc.WrongReasons(h.reasons) {
				t.Error(wrong)
			}
			for id, want := range sc.Progress {
				if h.progress[id] != want {
					t.Errorf("progress of %s %q, want %q", id, h.progress[id], want)
				}
			}
			t.Logf("%q", h.decisions)
		})
	}
}

// TestStuckOnANameThatIsNoTaskSaysSo (issue 92, item 1): a loop whose
// open task waits on a dependency that names no task ends with the one
// sentence that names it, not a wait for dependencies that never come.
func TestStuckOnANameThatIsNoTaskSaysSo(t *testing.T) {
	t.Parallel()
	m := New(Config{}, time.Unix(0, 0))
	f := planfile.ParseTasks([]byte("- [x] a <!-- ralph:id=t1 -->\n- [ ] g <!-- ralph:id=t2 depends=L9 -->\n"))
	e := m.final(f)
	if e == nil || e.Err == nil || e.Err.Error() != `Task t2 (line 2) depends on "L9", which is not a task id, so it will never be ready.` {
		t.Fatalf("final = %+v", e)
	}
}
