package hooks

import (
	"context"
	"slices"
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
	// Settled, when set, is called once the pending hooks are decided,
	// so that what was decided without a person is said in one line.
	Settled func()
	// Unchanged, when set, reports whether a hook that needed approval
	// (any but the person's own) is still what was approved: its files
	// are read again before each event, since the model may rewrite a
	// script in the middle of a session. One that changed stops running,
	// and a changed PreToolUse guard refuses the calls it matches.
	Unchanged func(h Hook) bool
	// PermissionMode is the session's mode in Claude Code's names
	// (PermissionMode), which every event sends.
	PermissionMode string
	// Base, when set, is the session's Set under this one: a child agent
	// following a definition whose front matter has hooks runs the
	// session's hooks (Base) and, after them, the definition's (this
	// Set), each decided and approved as its own Set says.
	Base *Set

	// settleMu is held while the pending hooks are decided (a person may
	// take minutes to answer); mu guards the fields above meanwhile, so
	// that Has never waits for an answer.
	settleMu sync.Mutex
	mu       sync.Mutex
	settled  bool
	// asMain says this Set's own SubagentStop hooks are also Stop hooks
	// (EndsAsMain).
	asMain bool
}

// EndsAsMain says the agent this Set's definition is for is the session's
// own (ralph --agent NAME): a definition's Stop hooks were read as
// SubagentStop, as Claude Code reads them for a subagent, but this agent's
// end is the session's Stop, so they fire there. A child that follows the
// same definition still fires them at its own end, as SubagentStop.
func (s *Set) EndsAsMain() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.asMain = true
	s.mu.Unlock()
}

// ownFor is this Set's own hooks that count for event: for Stop, those of
// SubagentStop too when the Set EndsAsMain. The caller holds s.mu.
func (s *Set) ownFor(event Event) []Hook {
	if event != Stop || !s.asMain {
		return s.Config.Hooks
	}
	out := slices.Clone(s.Config.Hooks)
	for _, h := range s.Config.Hooks {
		if h.Event == SubagentStop {
			h.Event = Stop
			out = append(out, h)
		}
	}
	return out
}

// Settle decides the pending hooks, once: the first caller asks, any
// other waits for its answers.
func (s *Set) Settle(ctx context.Context) {
	if s == nil {
		return
	}
	s.Base.Settle(ctx)
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	s.settle(ctx)
}

// trySettle settles unless a settle is under way, for an event that may
// come while a question is asked (a Notification beside the bell): its
// pending hooks, not approved yet, do not run for it.
func (s *Set) trySettle(ctx context.Context) {
	if !s.settleMu.TryLock() {
		return
	}
	defer s.settleMu.Unlock()
	s.settle(ctx)
}

// settle decides the pending hooks; the caller holds settleMu.
func (s *Set) settle(ctx context.Context) {
	s.mu.Lock()
	pending := s.Pending
	done := s.settled
	s.settled = true
	s.mu.Unlock()
	if done {
		return
	}
	var run, refused []Hook
	for _, h := range pending {
		switch {
		case s.Approve != nil && s.Approve(ctx, h):
			run = append(run, h)
		case h.Event == PreToolUse:
			refused = append(refused, h)
		}
	}
	s.mu.Lock()
	s.Config.Hooks = append(s.Config.Hooks, run...)
	s.Refused = append(s.Refused, refused...)
	s.Pending = nil
	s.mu.Unlock()
	if s.Settled != nil && len(pending) > 0 {
		s.Settled()
	}
}

// recheck takes out of the hooks that run those of event that changed
// since they were approved (Unchanged); a changed guard is refused.
func (s *Set) recheck(event Event) {
	if s.Unchanged == nil {
		return
	}
	s.mu.Lock()
	var check []Hook
	for _, h := range s.Config.Hooks {
		if h.Event == event && h.Source != SourceUser {
			check = append(check, h)
		}
	}
	s.mu.Unlock()
	var changed []Hook
	for _, h := range check {
		if !s.Unchanged(h) {
			changed = append(changed, h)
		}
	}
	if len(changed) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Config.Hooks = slices.DeleteFunc(slices.Clone(s.Config.Hooks), func(h Hook) bool { return slices.Contains(changed, h) })
	for _, h := range changed {
		if h.Event == PreToolUse {
			s.Refused = append(s.Refused, h)
		}
	}
}

// OnRewake sends the asyncRewake hooks' exits 2 to f (Runner.OnRewake).
func (s *Set) OnRewake(f func(Rewake)) {
	if s == nil || s.Runner == nil {
		return
	}
	s.Runner.OnRewake(f)
}

// Has reports whether event has any hook to run, refuse or decide, so
// that a caller builds an event's input only when something will read it.
func (s *Set) Has(event Event) bool {
	if s == nil {
		return false
	}
	if s.Base.Has(event) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Config.Disabled && len(s.Refused) == 0 {
		return false
	}
	for _, list := range [][]Hook{s.Config.Hooks, s.Refused, s.Pending} {
		for _, h := range list {
			if h.Event == event || event == Stop && s.asMain && h.Event == SubagentStop {
				return true
			}
		}
	}
	return false
}

// Any reports whether s has a hook for any event at all, to run, refuse
// or decide: a hook runs a program, which may change any file, so a run
// with one cannot tell from its tool calls alone which files changed.
func (s *Set) Any() bool {
	if s == nil {
		return false
	}
	if s.Base.Any() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Config.Disabled && len(s.Refused) == 0 {
		return false
	}
	return len(s.Config.Hooks)+len(s.Refused)+len(s.Pending) > 0
}

// RefusedFor are the refused guards that match value for event. A guard
// still pending is decided first (Settle; the tool door settles under
// its call's context before it asks).
func (s *Set) RefusedFor(event Event, value string) []Hook {
	if s == nil {
		return nil
	}
	s.Settle(context.Background())
	s.recheck(event)
	out := s.Base.RefusedFor(event, value)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.Refused {
		if h.Event == event && Matches(event, h.Matcher, value) {
			out = append(out, h)
		}
	}
	return out
}

// Fire runs event's hooks that match in, as Runner.Run does. The tool
// events wait for the pending hooks to be decided, since a guard must be
// decided before the call it guards; the others do not wait for a
// question under way.
func (s *Set) Fire(ctx context.Context, event Event, in Input) Result {
	if s == nil || s.Runner == nil {
		return Result{Event: event}
	}
	return s.Runner.Run(ctx, s.config(ctx, event), event, in)
}

// config is the hooks that run for event now: the Base's, then this
// Set's, each settled and rechecked.
func (s *Set) config(ctx context.Context, event Event) Config {
	if s == nil {
		return Config{}
	}
	base := s.Base.config(ctx, event)
	if slices.Contains(ToolEvents, event) {
		s.Settle(ctx)
	} else {
		s.trySettle(ctx)
	}
	s.recheck(event)
	s.mu.Lock()
	cfg := s.Config
	cfg.Hooks = s.ownFor(event)
	s.mu.Unlock()
	if s.Base == nil {
		return cfg
	}
	var hooks []Hook
	if !base.Disabled {
		hooks = append(hooks, base.Hooks...)
	}
	if !cfg.Disabled {
		hooks = append(hooks, cfg.Hooks...)
	}
	return Config{Hooks: hooks}
}
