package machine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestASnapshotContinuesTheMachine: a snapshot carried as JSON (as
// Temporal carries it through continue-as-new) makes a machine whose own
// snapshot is the same, and a snapshot is refused with work in flight.
func TestASnapshotContinuesTheMachine(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := New(Config{MaxCost: 2}, t0)
	m.attempts["a"], m.attempts["b"] = 2, 1
	m.notBefore["a"] = t0.Add(time.Minute)
	m.waived["b"] = 1
	m.tries["a"] = LastTry{Error: "boom", Summary: "tried"}
	m.streak = decide.Streak{NoProgress: 2, SameErrorRepeats: 1, LastErr: "boom"}
	m.breaker = decide.Breaker{State: memory.BreakerHalfOpen, Until: t0.Add(time.Hour), Cooldown: time.Minute, Trips: 1, Probe: "a"}
	m.iterations, m.errs, m.turns, m.cost = 3, 2, 7, 1.5
	m.done, m.failed = []string{"c"}, []string{"d"}
	m.usage = conversation.Usage{InputTokens: 10, OutputTokens: 20}
	m.paused, m.idleSaid = true, true
	m.wait = &memory.Wait{Reason: memory.WaitRateLimit, Until: t0.Add(time.Hour), Text: "waiting"}
	m.cfg.MaxCost = 4
	s, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, err := New(Config{MaxCost: 2, Continue: &back}, t0.Add(time.Hour)).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, again) {
		t.Errorf("continued machine's snapshot\n%+v\nwant\n%+v", again, s)
	}
	m.Stop()
	if _, err := m.Snapshot(); err == nil {
		t.Error("a stopping machine gave a snapshot")
	}
}

// TestTheSnapshotHoldsEveryFieldOfTheMachine: a field added to Machine
// is either in Snapshot or named here as what no snapshot carries (a
// snapshot is taken with nothing in flight, no question and no stop),
// so a continued run cannot silently forget it.
func TestTheSnapshotHoldsEveryFieldOfTheMachine(t *testing.T) {
	t.Parallel()
	notCarried := map[string]bool{"cfg": true, "running": true, "stopping": true, "ask": true, "now": true}
	// Machine's field names as Snapshot spells them.
	spelled := map[string]string{"errs": "Errors"}
	snap := reflect.TypeFor[Snapshot]()
	mt := reflect.TypeFor[Machine]()
	for i := range mt.NumField() {
		name := mt.Field(i).Name
		if notCarried[name] {
			continue
		}
		want := spelled[name]
		if want == "" {
			want = strings.ToUpper(name[:1]) + name[1:]
		}
		if _, ok := snap.FieldByName(want); !ok {
			t.Errorf("Machine.%s is not in Snapshot (as %s)", name, want)
		}
	}
}
