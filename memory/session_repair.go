package memory

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/spf13/afero"
)

// A session's own record (.ralph/sessions/<id>/session.json) holds the
// settings a resume goes on with: a task loop's agent, verify, limits and
// their seal. A crash of the machine, a full disk or a command in the
// fallback sandbox can leave it damaged or gone. Replacing it silently
// with a state rebuilt from the logs would drop those settings, and a
// resume would go on with defaults looser than what the person chose (no
// verify). So the damaged record is kept aside, the settings come back
// from the one other copy ralph writes (the project's summary,
// .ralph/session.json, written with the same seal after every save) when
// it names this session, and otherwise the state is rebuilt without them:
// its seal is then missing, and a resume of a task loop refuses it
// (project.trustSaved).

// StateRepair says what OpenSession did about a session's own record it
// could not read.
type StateRepair struct {
	// Problem is what was wrong with the record, as a phrase: "is
	// missing", "is damaged (…)" or "could not be read (…)".
	Problem string
	// Aside is where the damaged record was kept, relative to the
	// project; "" when there was nothing to keep.
	Aside string
	// Restored is the copy the state came back from, relative to the
	// project; "" when it was rebuilt from the logs without its settings.
	Restored string
}

// Record says what was wrong with the record and where it was kept.
func (r StateRepair) Record() string {
	s := "its record " + r.Problem
	if r.Aside != "" {
		s += fmt.Sprintf(" (kept as %s)", r.Aside)
	}
	return s
}

// Sentence says what was done, for the person.
func (r StateRepair) Sentence(id string) string {
	s := fmt.Sprintf("session %s: %s", id, r.Record())
	if r.Restored != "" {
		return s + fmt.Sprintf("; its state and saved settings were restored from %s", r.Restored)
	}
	return s + "; its state was rebuilt from its logs, without the settings it saved"
}

// repairState is the state of session id when its own record could not
// be read (readErr): restored from the summary when that names the same
// session, else rebuilt from the conversation. A damaged record is renamed
// aside first, so nothing is discarded.
func repairState(fs afero.Fs, root, id string, readErr error, msgs []conversation.Message) (State, *StateRepair) {
	own := filepath.Join(SessionDir(root, id), "session.json")
	rep := &StateRepair{Problem: "is missing"}
	if !errors.Is(readErr, ErrNoSession) {
		rep.Problem = fmt.Sprintf("could not be read (%v)", readErr)
		var corrupt *CorruptStateError
		if errors.As(readErr, &corrupt) {
			rep.Problem = fmt.Sprintf("is damaged (%v)", corrupt.Err)
		}
		if aside, err := SetAside(fs, own, time.Now()); err == nil {
			rep.Aside = relTo(root, aside)
		}
	}
	if sum, err := LoadState(fs, root); err == nil && sum.SessionID == id {
		rep.Restored = SessionFile
		return sum, rep
	}
	return State{SessionID: id, Status: StatusInterrupted, Turns: countAssistant(msgs)}, rep
}

// relTo is path relative to root with slashes, or path when it lies
// elsewhere.
func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}
