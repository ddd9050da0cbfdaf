package project

import (
	"testing"
	"time"
)

// TestLoopAsksWhereSomeoneMayAnswer: the task loop's own questions are
// asked at a terminal and with --wait-for-answers, never in CI and not
// by a run left working with nobody known to be there; the limit is the
// same on every engine.
func TestLoopAsksWhereSomeoneMayAnswer(t *testing.T) {
	t.Parallel()
	d := func(v time.Duration) *time.Duration { return &v }
	noEnv := func(string) string { return "" }
	ci := func(name string) string {
		if name == "CI" {
			return "true"
		}
		return ""
	}
	for _, c := range []struct {
		name     string
		a        Answers
		terminal bool
		getenv   func(string) string
		ask      bool
		limit    time.Duration
	}{
		{"a terminal", Answers{}, true, noEnv, true, time.Hour},
		{"no terminal", Answers{}, false, noEnv, false, time.Hour},
		{"--wait-for-answers", Answers{WaitFor: d(0), Timeout: d(2 * time.Second)}, false, noEnv, true, 2 * time.Second},
		{"--wait-for-answers=5m", Answers{WaitFor: d(5 * time.Minute)}, false, noEnv, true, 5 * time.Minute},
		{"--no-wait", Answers{NoWait: true}, false, noEnv, false, time.Hour},
		{"CI with --wait-for-answers", Answers{WaitFor: d(0)}, false, ci, false, time.Hour},
		{"CI at a terminal", Answers{}, true, ci, false, time.Hour},
	} {
		ask, limit := LoopAsks(c.a, time.Hour, c.terminal, c.getenv)
		if ask != c.ask || limit != c.limit {
			t.Errorf("%s: asks %v for %s, want %v for %s", c.name, ask, limit, c.ask, c.limit)
		}
	}
}
