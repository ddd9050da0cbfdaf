package hooks

import (
	"context"
	"sync"
)

// Set is the hooks one session runs: the hooks it may run, the runner that
// starts them, and the guards it may not run. Which hooks are in it (the
// settings files read, the person's approval of a project's hooks) is
// decided where the session is opened (coordinator/project); where a hook
// fires (the tool door, a turn's start and end, the session's start and
// end) only calls Fire. A nil *Set runs nothing and costs nothing.
type Set struct {
	// Config holds the hooks that may run.
	Config Config
	// Runner starts them in the project.
	Runner *Runner
	// Refused are the PreToolUse hooks of the project (or of a plugin)
	// that were never approved or changed since, where nobody could be
	// asked: they are not run, and the calls they match are refused,
	// since a guard that is skipped guards nothing (fail closed).
	Refused []Hook
	// Pending are the hooks of the project (or of a plugin) not approved
	// on this machine as they are now. Approve decides each when the
	// session's first hook event comes (Settle), when the face that asks
	// the person is up: one it approves runs from then on; a PreToolUse
	// guard it does not goes to Refused; any other simply does not run.
	Pending []Hook
	Approve func(ctx context.Context, h Hook) bool

	settleMu sync.Mutex
	settled  bool
}

// Settle decides the pending hooks, once: the first event's caller asks,
// any other waits for its answer.
func (s *Set) Settle(ctx context.Context) {
	if s == nil {
		return
	}
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	if s.settled {
		return
	}
	s.settled = true
	for _, h := range s.Pending {
		switch {
		case s.Approve != nil && s.Approve(ctx, h):
			s.Config.Hooks = append(s.Config.Hooks, h)
		case h.Event == PreToolUse:
			s.Refused = append(s.Refused, h)
		}
	}
	s.Pending = nil
}

// Has reports whether event has any hook to run or refuse, so that a
// caller builds an event's input only when something will read it.
func (s *Set) Has(event Event) bool {
	if s == nil {
		return false
	}
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	if s.Config.Disabled && len(s.Refused) == 0 {
		return false
	}
	for _, list := range [][]Hook{s.Config.Hooks, s.Refused, s.Pending} {
		for _, h := range list {
			if h.Event == event {
				return true
			}
		}
	}
	return false
}

// RefusedFor are the refused guards that match value for event.
func (s *Set) RefusedFor(event Event, value string) []Hook {
	if s == nil {
		return nil
	}
	// A guard still pending is decided before the call it might guard.
	s.Settle(context.Background())
	var out []Hook
	for _, h := range s.Refused {
		if h.Event == event && Matches(event, h.Matcher, value) {
			out = append(out, h)
		}
	}
	return out
}

// Fire runs event's hooks that match in, as Runner.Run does.
func (s *Set) Fire(ctx context.Context, event Event, in Input) Result {
	if s == nil || s.Runner == nil {
		return Result{Event: event}
	}
	s.Settle(ctx)
	return s.Runner.Run(ctx, s.Config, event, in)
}
