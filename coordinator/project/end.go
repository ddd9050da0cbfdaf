package project

import (
	"time"

	"github.com/ralph-dev/ralph/memory"
)

// How a session's record ends when no task loop or conversation run
// saved its end itself: a chat or a script closing, a loop that never
// started, a one-shot that runs no conversation of its own.

// CloseConversation leaves a truthful status when a chat or a script
// ends: a conversation with no work in flight is not "running". Every
// finished run has saved its own status already; a session in which
// nothing ran goes back to what it was before, or completed. A session
// not running is not written again: a chat that let the project go (see
// Hold) would put its session back in .ralph/session.json over the one
// another ralph runs now.
func (p *Project) CloseConversation() {
	if !memory.Active(p.Session.State().Status) {
		return
	}
	_ = p.Session.SaveState(func(st *memory.State) {
		if !memory.Active(st.Status) {
			return
		}
		st.Status = memory.StatusCompleted
		if p.Resumed && p.PriorStatus != "" && !memory.Active(p.PriorStatus) {
			st.Status = p.PriorStatus
		}
		st.EndedAt = time.Now().UTC()
	})
}

// EndUnstarted ends a session whose work failed before it began (a task
// loop whose tasks or options turned out unusable once the project was
// open), so that it is not left "running" for status, watch and the next
// ralph's recovery: a resumed session goes back to the status it had, a
// new one failed, with err as its error.
func (p *Project) EndUnstarted(err error) {
	_ = p.Session.SaveState(func(st *memory.State) {
		st.Status = memory.StatusFailed
		if p.Resumed && p.PriorStatus != "" && !memory.Active(p.PriorStatus) {
			st.Status = p.PriorStatus
		} else if err != nil {
			st.Error = err.Error()
		}
		st.EndedAt = time.Now().UTC()
	})
}

// EndOneShot ends the session of a one-shot that runs no conversation of
// its own (ralph review): completed when verdict is nil, failed with it
// otherwise, so that status, watch and the next ralph's recovery do not
// take it for one left running.
func (p *Project) EndOneShot(verdict error) {
	_ = p.Session.SaveState(func(st *memory.State) {
		st.Status, st.Error = memory.StatusCompleted, ""
		if verdict != nil {
			st.Status, st.Error = memory.StatusFailed, verdict.Error()
		}
		st.EndedAt = time.Now().UTC()
	})
}
