package hooks

import "context"

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
}

// Has reports whether event has any hook to run or refuse, so that a
// caller builds an event's input only when something will read it.
func (s *Set) Has(event Event) bool {
	if s == nil || s.Config.Disabled && len(s.Refused) == 0 {
		return false
	}
	for _, h := range s.Config.Hooks {
		if h.Event == event {
			return true
		}
	}
	for _, h := range s.Refused {
		if h.Event == event {
			return true
		}
	}
	return false
}

// RefusedFor are the refused guards that match value for event.
func (s *Set) RefusedFor(event Event, value string) []Hook {
	if s == nil {
		return nil
	}
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
	return s.Runner.Run(ctx, s.Config, event, in)
}
