package eventwords

import (
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// Feed is the one rule for which events a live face prints as a line: the
// chat shell, the one-shot's progress display and its -v lines (and a
// script's, which shares the progress display). A record's face (ralph
// logs, ralph watch without a terminal, the web page) prints every
// event's line instead.
//
// A live face shows what the person cannot see otherwise: a child's
// message, a call nobody is asked about, a tool's result, a message
// delivered while the run works, retries, warnings, tasks, verify runs, agents and the
// loop's waits. It leaves out the main agent's answer and thinking (the
// face streams them), the person's own prompt (on the screen already, where
// it was typed), turns and saves, and errors: an error ends its agent's
// run, so the run's result says the main agent's once and a child's
// agent_finished line says a child's.
//
// A child that fails ends with its agent_finished line saying why, then
// the error result of the spawn_agent call that started it says the same
// sentence again: the feed keeps it to the agent_finished line, which
// names the agent.
//
// Every event must go through Line, in order, for that to hold. Its zero
// value is the one-shot's rule; it is safe for use by any goroutine.
type Feed struct {
	// AllResults shows the results of tool calls that succeeded too: the
	// chat shows each under its call. The one-shot prints its steps above
	// a progress line or into a log, where every result would bury the
	// calls, so it shows a tool's errors only.
	AllResults bool

	mu sync.Mutex
	// calls are the spawn_agent calls whose child's failure an
	// agent_finished line said.
	calls map[string]bool
}

// Line is the line a live face prints for ev, the vocabulary's own
// (EventLine), or false when the face prints none.
func (f *Feed) Line(ev event.Event) (Line, bool) {
	if !f.shows(ev) {
		return Line{}, false
	}
	return EventLine(ev)
}

// shows is the rule, with the child-failure bookkeeping: it is called once
// for every event.
func (f *Feed) shows(ev event.Event) bool {
	switch ev.Type {
	case event.Assistant:
		// A child's or an external agent's message, folded to its first
		// line as claude and codex show their own.
		return !isMain(ev) && strings.TrimSpace(ev.Text) != ""
	case event.ToolCall:
		// An asked call: the question shows it, and the asker shows it
		// running once it is allowed.
		return !ev.Asking
	case event.ToolResult:
		if ev.IsError {
			return !f.told(ev.ToolID)
		}
		return f.AllResults
	case event.AgentFinished:
		if ev.IsError {
			f.failed(ev.ToolID)
		}
		return true
	case event.UserMessage:
		// A message delivered while the run works; a prompt is on the
		// screen where the person typed it, a child's task in its
		// agent_spawned line.
		return ev.Priority != ""
	case event.Retry, event.Fallback, event.Warning, event.LimitWait, event.Breaker,
		event.TaskChanged, event.Verified, event.AgentSpawned, event.TodoUpdated,
		event.WebSearch:
		// The loop waits for a limit or its breaker changed: the line
		// says why nothing seems to happen.
		return true
	case event.ConversationCompacted:
		// ralph compacted the conversation to try a refused request once
		// more; the chat's /compact says what it did when its job ends.
		return CompactedForRetry(ev)
	}
	return false
}

// Diagnostic reports the events a one-shot run or a script says on
// standard error even where it shows nothing else (no terminal, JSON
// output), like an error: a warning, a loop that starts no task for a
// while and why (someone reading a headless run's log must not think it
// hung), and a conversation compacted to try a refused request again. A
// live face shows each of them too (Feed).
func Diagnostic(ev event.Event) bool {
	switch ev.Type {
	case event.Warning, event.LimitWait, event.Breaker, event.Fallback:
		// A fallback says which model answered, which a headless run's
		// reader must know as well as a person watching.
		return true
	}
	return CompactedForRetry(ev)
}

// failed notes that the child started by the call callID failed and that
// its agent_finished line said why.
func (f *Feed) failed(callID string) {
	if callID == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]bool{}
	}
	f.calls[callID] = true
}

// told reports whether the failure behind the call callID's error result
// was shown already; it forgets the call, which has no other result.
func (f *Feed) told(callID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	told := f.calls[callID]
	delete(f.calls, callID)
	return told
}

// isMain reports whether ev is the main agent's.
func isMain(ev event.Event) bool {
	return ev.AgentID == "" || ev.AgentID == event.MainAgent
}
