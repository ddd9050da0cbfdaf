package cli

import (
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
)

// runEnd is how the run a watch follows ended, for the watch's own exit
// code: the code the run itself exits with. Its last result says it as
// the run's own face reads it (ExitCode: 0, 1, or 130 for a stop — a
// SIGTERM's 143 does not travel in an event); without one (a ralph
// killed), the session's record does: failed is 1, interrupted 130,
// still running (nobody saved an end) 1, else 0. A chat ends as the chat
// process does: 0 when the person left it, whatever its last run did.
type runEnd struct {
	// followed says a running ralph was followed; a session shown from
	// its record, after its end, is a view that went well: 0.
	followed bool
	res      *event.Result
}

// see notes the run's result among the events.
func (e *runEnd) see(ev event.Event) {
	if ev.Type == event.RunResult && ev.Result != nil && mainAgent(ev.AgentID) {
		r := *ev.Result
		e.res = &r
	}
}

// code is the exit code of the run followed, read once it ended.
func (e *runEnd) code(fs afero.Fs, root, session string) int {
	switch {
	case !e.followed:
		return ExitOK
	}
	st, err := memory.LoadSessionState(fs, root, session)
	switch {
	case err == nil && st.Mode == project.ModeChat:
		// A chat is many runs, and a stopped one is no end: the chat
		// exits 0 when the person leaves it, and so does its watch,
		// unless nobody saved an end (a chat killed).
		if st.Status == memory.StatusRunning {
			return ExitFailed
		}
		return ExitOK
	case e.res != nil:
		return ExitCode(*e.res)
	case err != nil:
		return ExitOK
	}
	switch st.Status {
	case memory.StatusFailed, memory.StatusRunning:
		return ExitFailed
	case memory.StatusInterrupted:
		return 130
	}
	return ExitOK
}
