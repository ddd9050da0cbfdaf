package loop

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// loopSession is a real session record for a loop test, so decisions.jsonl
// and session.json are written as ralph writes them.
func loopSession(t *testing.T, fs afero.Fs, root string) *memory.Session {
	t.Helper()
	s, err := memory.CreateSession(fs, root, memory.NewID(time.Now()), memory.State{Status: memory.StatusRunning, Mode: "run", StartedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recordInto records the events of b (a new broker when nil) into the
// session, as a run's recorder does: decisions reach decisions.jsonl
// only through it.
func recordInto(t *testing.T, b *pubsub.Broker[event.Event], s *memory.Session) *pubsub.Broker[event.Event] {
	t.Helper()
	if b == nil {
		b = pubsub.NewBroker[event.Event]()
	}
	rec := coordinator.StartRecording(context.Background(), b, s, nil)
	t.Cleanup(func() { _ = rec.Stop() })
	return b
}

// decisions reads the session's decisions.jsonl.
func decisions(t *testing.T, fs afero.Fs, root string, s *memory.Session) []memory.DecisionRecord {
	t.Helper()
	recs, _, err := memory.ReadJSONL[memory.DecisionRecord](fs, filepath.Join(memory.SessionDir(root, s.ID), memory.DecisionsLog+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// breakerKinds are the breaker's transitions in decisions, in order, with
// the time of each.
func breakerKinds(recs []memory.DecisionRecord) ([]string, []time.Time) {
	var kinds []string
	var at []time.Time
	for _, r := range recs {
		if strings.HasPrefix(r.Kind, "breaker") {
			kinds = append(kinds, r.Kind)
			at = append(at, r.Time)
		}
	}
	return kinds, at
}

// TestBreakerClosedOpenHalfOpenClosed: with nobody to ask, three failures
// in a row open the breaker; after the cooldown one task goes through
// alone and, succeeding, closes it; every transition is in
// decisions.jsonl, and the loop ends with every task done.
func TestBreakerClosedOpenHalfOpenClosed(t *testing.T) {
	root, fs := taskProject(t, taskList(5))
	s := loopSession(t, fs, root)
	var calls atomic.Int32
	var snapshots []memory.State
	events := collectEvents(t)
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 10, Backoff: time.Millisecond, BreakerCooldown: 200 * time.Millisecond},
		Store: snapshotStore{s, &snapshots}, Events: recordInto(t, events.broker, s),
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			if calls.Add(1) <= 3 {
				return Outcome{Err: errors.New("the server is down")}
			}
			return Outcome{Completed: true}
		}),
	})
	if res.IsError || res.Reason != ReasonAllDone || len(res.Done) != 5 {
		t.Fatalf("result = %+v", res)
	}
	kinds, at := breakerKinds(decisions(t, fs, root, s))
	if strings.Join(kinds, " ") != "breaker_open breaker_half_open breaker_closed" {
		t.Fatalf("breaker decisions = %v, want open, half-open, closed", kinds)
	}
	if gap := at[1].Sub(at[0]); gap < 200*time.Millisecond {
		t.Errorf("half-open %s after opening, before the 200ms cooldown", gap)
	}
	// session.json said so while it was open.
	open := false
	for _, st := range snapshots {
		if b := st.Breaker; b != nil && b.State == memory.BreakerOpen && time.Duration(b.Cooldown) == 200*time.Millisecond && !b.Until.IsZero() {
			open = true
		}
	}
	if !open {
		t.Error("session.json never showed the open breaker with its cooldown and end")
	}
	if final := s.State(); final.Breaker != nil || final.Wait != nil {
		t.Errorf("the ended loop still shows breaker %+v, wait %+v", final.Breaker, final.Wait)
	}
	var states []string
	for _, ev := range events.all() {
		if ev.Type == event.Breaker {
			states = append(states, ev.State)
		}
	}
	if strings.Join(states, " ") != "open half_open closed" {
		t.Errorf("breaker events = %v", states)
	}
}

// TestBreakerHalfOpenFailureDoublesTheCooldown: the task let through
// fails, so the breaker opens again for twice as long; while half-open
// only that one task starts, even with --parallel 3.
func TestBreakerHalfOpenFailureDoublesTheCooldown(t *testing.T) {
	root, fs := taskProject(t, taskList(6))
	s := loopSession(t, fs, root)
	// Every task fails until the breaker has gone half-open twice: the
	// first task it lets through fails, the second succeeds.
	var halfOpens atomic.Int32
	events := pubsub.NewBroker[event.Event]()
	t.Cleanup(events.Subscribe(context.Background(), func(ev event.Event) {
		if ev.Type == event.Breaker && ev.State == memory.BreakerHalfOpen {
			halfOpens.Add(1)
		}
	}, pubsub.Sync()))
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 10, Backoff: time.Millisecond, BreakerCooldown: 100 * time.Millisecond, Parallel: 3},
		Store: s, Events: recordInto(t, events, s),
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
			time.Sleep(20 * time.Millisecond)
			if halfOpens.Load() < 2 {
				return Outcome{Err: errors.New("still down")}
			}
			return Outcome{Completed: true}
		}),
	})
	if res.IsError || len(res.Done) != 6 {
		t.Fatalf("result = %+v", res)
	}
	recs := decisions(t, fs, root, s)
	kinds, at := breakerKinds(recs)
	if strings.Join(kinds, " ") != "breaker_open breaker_half_open breaker_open breaker_half_open breaker_closed" {
		t.Fatalf("breaker decisions = %v", kinds)
	}
	if gap := at[3].Sub(at[2]); gap < 200*time.Millisecond {
		t.Errorf("the second opening lasted %s, want the doubled cooldown of 200ms", gap)
	}
	for _, r := range recs {
		if r.Kind == "breaker_open" && strings.HasPrefix(r.Detail, "half-open → open") &&
			(!strings.Contains(r.Reason, "doubles to 200ms") || !strings.Contains(r.Detail, "cooldown 200ms")) {
			t.Errorf("reopening does not name the doubled cooldown: %+v", r)
		}
		if strings.HasPrefix(r.Kind, "breaker_") && r.Reason == "" {
			t.Errorf("a breaker transition without a reason: %+v", r)
		}
	}
	// Between each half-open and the next verdict exactly one task starts.
	picked, inHalf := 0, false
	for _, r := range recs {
		switch {
		case r.Kind == "breaker_half_open":
			inHalf, picked = true, 0
		case inHalf && r.Kind == "task_picked":
			picked++
		case inHalf && strings.HasPrefix(r.Kind, "breaker"):
			if picked != 1 {
				t.Errorf("%d tasks started while half-open, want 1", picked)
			}
			inHalf = false
		}
	}
}

// snapshotStore keeps every state the loop saves.
type snapshotStore struct {
	*memory.Session
	states *[]memory.State
}

func (s snapshotStore) SaveState(fn func(*memory.State)) error {
	return s.Session.SaveState(func(st *memory.State) {
		fn(st)
		*s.states = append(*s.states, *st)
	})
}

// eventLog collects a broker's events for a test.
type eventLog struct {
	broker *pubsub.Broker[event.Event]
	mu     sync.Mutex
	events []event.Event
}

func collectEvents(t *testing.T) *eventLog {
	t.Helper()
	l := &eventLog{broker: pubsub.NewBroker[event.Event]()}
	t.Cleanup(l.broker.Subscribe(context.Background(), func(ev event.Event) {
		l.mu.Lock()
		l.events = append(l.events, ev)
		l.mu.Unlock()
	}))
	return l
}

func (l *eventLog) all() []event.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event.Event(nil), l.events...)
}

// TestBreakerWithNothingLeft: one task fails every attempt and the
// breaker's condition holds after the last, when the task is failed and
// nothing is left: nobody is asked whether to go on, no cooldown is
// waited out, and the loop ends at once.
func TestBreakerWithNothingLeft(t *testing.T) {
	for _, ask := range []bool{true, false} {
		root, fs := taskProject(t, taskList(1))
		var asked atomic.Int32
		o := Options{Fs: fs, Root: root, Policy: decide.Policy{Retries: 2, Backoff: time.Millisecond, BreakerCooldown: time.Hour}, Breaker: DefaultBreaker,
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Err: errors.New("boom")} })}
		if ask {
			o.Ask = func(context.Context, string) bool { asked.Add(1); return true }
		}
		start := time.Now()
		res := Run(context.Background(), o)
		if !res.IsError || len(res.Failed) != 1 || asked.Load() != 0 || time.Since(start) > 5*time.Second {
			t.Fatalf("ask=%v: result %+v, asked %d times, took %s", ask, res, asked.Load(), time.Since(start))
		}
	}
}
