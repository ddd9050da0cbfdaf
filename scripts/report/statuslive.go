package report

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// Live is what the face a status is asked in knows of its own open
// session and the files do not say: a chat lets the project lock go while
// it waits at its prompt and saves its session as not running between
// messages (so that another ralph may work beside it), and its tokens
// and model change with every step.
type Live struct {
	SessionID string `json:"session_id"`
	// Busy says work runs in the session now (a message, the task loop).
	Busy bool `json:"busy"`
	// LockHeld says this process holds the project lock now.
	LockHeld bool   `json:"lock_held"`
	PID      int    `json:"pid"`
	Model    string `json:"model,omitempty"`
	// InputTokens and OutputTokens are the session's so far.
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// StatusLive is Status asked in an open session (chat's /status): the
// same report `ralph status` gives, told of the session that asks, so
// that it says the session is open (running or idle at its prompt), whose
// the lock is, and its tokens and model so far.
func StatusLive(fs afero.Fs, root string, now time.Time, l Live) (StatusReport, error) {
	r, err := Status(fs, root, now)
	if err != nil {
		return r, err
	}
	if l.PID == 0 {
		l.PID = os.Getpid()
	}
	if r.Session == nil || r.Session.SessionID != l.SessionID {
		// Another ralph worked here while the chat waited: the project's
		// session.json is its; this session's own record is reported.
		if st, err := memory.LoadSessionState(fs, root, l.SessionID); err == nil {
			r.Session = &st
		}
	}
	var kept []string
	for _, w := range r.Warnings {
		// The one warning the live session makes untrue of itself.
		if w != noLiveHolder {
			kept = append(kept, w)
		}
	}
	r.Warnings, r.Live = kept, &l
	return r, nil
}

// noLiveHolder is the warning a session marked running under a free lock
// gets: a run that ended without saving.
const noLiveHolder = "session.json says running but no live ralph holds the lock: the run ended without saving (a crash or a kill); the next ralph marks it interrupted"

// status is the status line of the open session asked in.
func (l *Live) status() string {
	if l.Busy {
		return fmt.Sprintf("open, running (this chat, pid %d)", l.PID)
	}
	return fmt.Sprintf("open, idle at this chat's prompt (pid %d)", l.PID)
}

// lock is the lock line of the open session asked in: held by it, or let
// go while it waits, or taken meanwhile by another ralph (other).
func (l *Live) lock(other LockReport) string {
	switch {
	case l.LockHeld:
		return fmt.Sprintf("held by this chat (pid %d), session %s", l.PID, l.SessionID)
	case other.State == memory.LockHeld || other.State == memory.LockForeign:
		return other.text() + "; this chat takes the project back with its next message"
	}
	return "let go while this chat waits at its prompt, so that another ralph may work here; the chat takes it back with its next message"
}

// set puts value in the row labelled label, or adds the row.
func (t *table) set(label, value string) {
	for _, r := range t.rows {
		if len(r) == 2 && r[0] == label {
			r[1] = value
			return
		}
	}
	t.add(label, value)
}
