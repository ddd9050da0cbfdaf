package machine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/loop/decide/scenarios"
	"github.com/ralph-dev/ralph/memory/planfile"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func twoTasks() *planfile.TaskFile {
	f := planfile.ParseTasks([]byte("# Tasks\n\n- [ ] one <!-- ralph:id=a -->\n- [ ] two <!-- ralph:id=b -->\n"))
	f.AssignIDs(nil)
	return f
}

func kinds(s Step) []Kind {
	var out []Kind
	for _, e := range s.Effects {
		out = append(out, e.Kind)
	}
	return out
}

func decisionKinds(s Step) []string {
	var out []string
	for _, e := range s.Effects {
		if e.Kind == Record {
			out = append(out, e.Decision.Kind)
		}
	}
	return out
}

// TestTheMachineIsDeterministic: the same inputs give the same effects,
// event for event, as a Temporal replay needs.
func TestTheMachineIsDeterministic(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios.All {
		run := func() []string {
			cfg := Config{Policy: sc.Policy, MaxWait: sc.MaxWait, CanAsk: sc.Ask}
			if sc.Breaker != nil {
				cfg.Breaker = func(s Stats) (bool, error) { return sc.Breaker(s.NoProgress, s.SameErrorRepeats), nil }
			}
			f := planfile.ParseTasks([]byte(sc.Tasks))
			f.AssignIDs(nil)
			h := &sim{t: t, sc: sc, m: New(cfg, t0), f: f, now: t0, kinds: map[Kind]int{}, reasons: map[string]string{}, progress: map[string]string{}}
			h.run()
			return append(h.decisions, h.starts...)
		}
		if a, b := run(), run(); !slices.Equal(a, b) {
			t.Errorf("%s: %q then %q", sc.Name, a, b)
		}
	}
}

// TestTheBudgetQuestion: a spent budget with someone to ask asks; yes
// doubles the limit, nobody answering stops the loop.
func TestTheBudgetQuestion(t *testing.T) {
	t.Parallel()
	cost := 1.5
	for _, tc := range []struct {
		yes, answered bool
		want          []string
		end           bool
	}{
		{yes: true, answered: true, want: []string{"budget_raised"}},
		{want: []string{"budget_stop"}, end: true},
	} {
		m := New(Config{MaxCost: 1, CanAsk: true}, t0)
		f := twoTasks()
		s := m.Next(t0, f)
		if got := kinds(s); got[0] != Start {
			t.Fatalf("effects %v", got)
		}
		if err := f.SetState("a", planfile.TaskDone); err != nil {
			t.Fatal(err)
		}
		m.Finished(t0, f, Outcome{Task: s.Effects[0].Task, Attempt: 1, Done: true, CostUSD: &cost})
		s = m.Next(t0, f)
		if !s.Asking || !slices.Equal(kinds(s), []Kind{Ask}) {
			t.Fatalf("no question: %+v", s)
		}
		if again := m.Next(t0, f); !again.Asking || len(again.Effects) != 0 {
			t.Fatalf("asked twice: %+v", again)
		}
		s = m.Answer(t0, tc.yes, tc.answered)
		if got := decisionKinds(s); !slices.Equal(got, tc.want) || (s.End != nil) != tc.end {
			t.Fatalf("answer: decisions %v, end %+v", got, s.End)
		}
		if s.End != nil && s.End.Reason != decide.ReasonMaxCost {
			t.Fatalf("end %+v", s.End)
		}
	}
}

// TestAPauseIsRecordedOnceAndItsResume: a paused loop with nothing in
// flight is idle, says so once, and a resume says so too.
func TestAPauseIsRecordedOnceAndItsResume(t *testing.T) {
	t.Parallel()
	m := New(Config{}, t0)
	f := twoTasks()
	m.Pause()
	s := m.Next(t0, f)
	if !s.Idle || !slices.Equal(decisionKinds(s), []string{"paused"}) {
		t.Fatalf("%+v", s)
	}
	if s = m.Next(t0, f); !s.Idle || len(s.Effects) != 0 {
		t.Fatalf("said twice: %+v", s)
	}
	if s = m.Resume(t0); !slices.Equal(decisionKinds(s), []string{"resumed"}) {
		t.Fatalf("%+v", s)
	}
	if s = m.Next(t0, f); kinds(s)[0] != Start {
		t.Fatalf("no start after the resume: %+v", s)
	}
}

// TestNotStartedTakesTheAttemptBack: a start the host could not carry
// out (another worker claimed the task) counts nothing.
func TestNotStartedTakesTheAttemptBack(t *testing.T) {
	t.Parallel()
	m := New(Config{}, t0)
	f := twoTasks()
	m.Next(t0, f)
	m.NotStarted("a")
	if m.Iterations() != 0 || m.Attempt("a") != 0 || m.IsRunning("a") {
		t.Fatalf("iterations %d attempt %d running %v", m.Iterations(), m.Attempt("a"), m.Running())
	}
}

// TestLegacyWaitsOutAHoldWithNothingLeft: the behaviour GetVersion keeps
// for workflows started before the machine: a failure with nothing left
// still opens the breaker and the loop waits its cooldown; the machine
// itself ends at once.
func TestLegacyWaitsOutAHoldWithNothingLeft(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		m := New(Config{Policy: decide.Policy{OnError: decide.OnErrorSkip}, Legacy: legacy,
			Breaker: func(Stats) (bool, error) { return true, nil }}, t0)
		f := planfile.ParseTasks([]byte("# Tasks\n\n- [ ] one <!-- ralph:id=a -->\n"))
		s := m.Next(t0, f)
		if err := f.SetState("a", planfile.TaskInProgress); err != nil {
			t.Fatal(err)
		}
		s = m.Finished(t0, f, Outcome{Task: s.Effects[0].Task, Attempt: 1, Failure: "boom"})
		if err := f.SetState("a", planfile.TaskFailed); err != nil {
			t.Fatal(err)
		}
		opened := slices.Contains(decisionKinds(s), "breaker_open")
		next := m.Next(t0, f)
		if legacy != opened || legacy != (next.End == nil && next.Wait == decide.DefaultBreakerCooldown) {
			t.Errorf("legacy %v: opened %v, next %+v", legacy, opened, next)
		}
	}
}

// TestEveryEffectKindHasAName: the hosts' tests name kinds by String.
func TestEveryEffectKindHasAName(t *testing.T) {
	t.Parallel()
	var names []string
	for _, k := range Kinds() {
		if k.String() == "unknown" {
			t.Errorf("kind %d has no name", k)
		}
		names = append(names, k.String())
	}
	if !reflect.DeepEqual(names, []string{"start", "emit", "record", "save", "ask", "commit", "look"}) {
		t.Errorf("kinds %v", names)
	}
}
