package decide

import (
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func TestBackoffHoldsAndSaysTheWait(t *testing.T) {
	nb := map[string]time.Time{"a": t0.Add(3 * time.Second), "c": t0.Add(time.Second), "b": t0.Add(-time.Second)}
	b := Backoff{NotBefore: nb, Now: t0}
	var got []string
	for _, id := range []string{"a", "b", "c", "d"} {
		if !b.Holds(id) {
			got = append(got, id)
		}
	}
	if len(got) != 2 || got[0] != "b" || got[1] != "d" || b.Wait != time.Second {
		t.Fatalf("ready %v, wait %s", got, b.Wait)
	}
}

func TestSettleFailure(t *testing.T) {
	p := Policy{Retries: 2, Backoff: time.Second}.WithDefaults()
	cases := []struct {
		p              Policy
		attempt, waive int
		final          bool
		next           planfile.TaskState
		after          time.Duration
		abort          bool
	}{
		{p, 1, 0, false, planfile.TaskOpen, time.Second, false},
		{p, 2, 0, false, planfile.TaskOpen, 2 * time.Second, false},
		{p, 3, 0, false, planfile.TaskFailed, 0, false},
		{p, 3, 1, false, planfile.TaskOpen, 4 * time.Second, false}, // a limit's attempt spends no retry
		{p, 1, 0, true, planfile.TaskFailed, 0, false},              // a merge conflict is final
		{Policy{OnError: OnErrorSkip, Retries: 5}.WithDefaults(), 1, 0, false, planfile.TaskFailed, 0, false},
		{Policy{OnError: OnErrorAbort}.WithDefaults(), 1, 0, false, planfile.TaskFailed, 0, true},
	}
	for i, c := range cases {
		s := c.p.SettleFailure(c.attempt, c.waive, c.final, t0)
		var after time.Duration
		if !s.NotBefore.IsZero() {
			after = s.NotBefore.Sub(t0)
		}
		if s.Next != c.next || after != c.after || s.Abort != c.abort {
			t.Errorf("case %d: %+v, want %s after %s abort %v", i, s, c.next, c.after, c.abort)
		}
	}
}

func TestStreak(t *testing.T) {
	s := Streak{}.Failed("x").Failed("x").Failed("y")
	if s.NoProgress != 3 || s.SameErrorRepeats != 1 || s.LastErr != "y" {
		t.Fatalf("%+v", s)
	}
	if s = s.Failed("y"); s.SameErrorRepeats != 2 {
		t.Fatalf("%+v", s)
	}
	if s.Succeeded() != (Streak{}) {
		t.Fatal("a success ends the streak")
	}
}

func TestStopConditions(t *testing.T) {
	p := Policy{MaxIterations: 3}.WithDefaults()
	if !p.CanStart(0, 1, 2) || p.CanStart(1, 1, 0) || p.CanStart(1, 4, 2) {
		t.Fatal("CanStart")
	}
	if !p.OutOfIterations(3, 0, 1) || p.OutOfIterations(3, 1, 1) || p.OutOfIterations(3, 0, 0) || p.OutOfIterations(2, 0, 1) {
		t.Fatal("OutOfIterations")
	}
	if CostSpent(5, 0, 1, 0) || !CostSpent(5, 5, 1, 0) || !CostSpent(5, 5, 0, 1) || CostSpent(4.9, 5, 1, 0) || CostSpent(5, 5, 0, 0) {
		t.Fatal("CostSpent")
	}
	if r, e := Final(memory.TaskCounts{Done: 2}, 0); r != ReasonAllDone || e {
		t.Fatal(r, e)
	}
	if r, e := Final(memory.TaskCounts{Done: 2, Failed: 1}, 0); r != ReasonSomeFailed || !e {
		t.Fatal(r, e)
	}
	if r, e := Final(memory.TaskCounts{Open: 1}, 0); r != ReasonStuck || !e {
		t.Fatal(r, e)
	}
}

func TestBreakerCycle(t *testing.T) {
	var b Breaker
	none := func(string) bool { return false }
	if b.Failed("a") != Judge || b.Record() != nil {
		t.Fatal("a closed breaker asks for judgement and has no record")
	}
	b.Open(t0, time.Minute)
	if b.Name() != memory.BreakerOpen || b.Trips != 1 || !b.Until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("%+v", b)
	}
	if h, half := b.Hold(t0.Add(20*time.Second), none); h != 40*time.Second || half {
		t.Fatal(h, half)
	}
	if b.Failed("other") != Ignore {
		t.Fatal("an open breaker ignores failures")
	}
	if h, half := b.Hold(t0.Add(time.Minute), none); h != 0 || !half || b.Parallel(4) != 1 {
		t.Fatal(h, half)
	}
	b.Started("p")
	b.Started("q") // only the first is the probe
	running := func(id string) bool { return id == "p" }
	if h, _ := b.Hold(t0.Add(time.Minute), running); h != time.Hour {
		t.Fatal("the probe runs alone")
	}
	if b.Failed("p") != Reopen || b.Cooldown != 2*time.Minute {
		t.Fatalf("%+v", b)
	}
	b.Open(t0.Add(2*time.Minute), time.Minute)
	if !b.Until.Equal(t0.Add(4*time.Minute)) || b.Trips != 2 {
		t.Fatalf("%+v", b)
	}
	b.Hold(t0.Add(5*time.Minute), none)
	b.Started("r")
	if b.Succeeded("x", time.Minute) || !b.Succeeded("r", time.Minute) || b.Name() != memory.BreakerClosed || b.Cooldown != time.Minute {
		t.Fatalf("%+v", b)
	}
	if r := b.Record(); r == nil || r.State != memory.BreakerClosed || r.Trips != 2 {
		t.Fatalf("%+v", r)
	}
}
