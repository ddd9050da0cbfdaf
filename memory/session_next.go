package memory

import (
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Next ends this session's record and goes on in a new one named id, in
// the same *Session, so everything that writes through it (the
// coordinator, the recorder of its events, the checkpoints) writes the
// new record from now on without being told. The old session is saved
// as completed and stays in .ralph/sessions, listed and resumable by its
// id; the new one is created as CreateSession creates any (complete or
// not at all) and .ralph/session.json names it, so `ralph -c` continues
// the new one and never sends the old conversation again. This is chat's
// /clear: a person who clears a conversation does not want it back.
// Call it only while nothing runs.
func (s *Session) Next(id string) error {
	now := time.Now().UTC()
	if err := s.SaveState(func(st *State) {
		if Active(st.Status) {
			st.Status = StatusCompleted
		}
		st.EndedAt = now
	}); err != nil {
		return fmt.Errorf("end session %s: %w", s.ID, err)
	}
	old := s.State()
	st := State{Status: StatusRunning, Mode: old.Mode, Model: old.Model, StartedAt: now}
	if old.CostUSD != nil {
		st.CostUSD = new(float64)
	}
	if s.seal.key != nil {
		st.SessionID = id
		SealNew(s.seal.key, &st)
	}
	next, err := createSession(s.fs, s.Root, id, st, s.redact, CreateOptions{})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := []error{s.waitPlaced()}
	for path, a := range s.files {
		errs = append(errs, a.f.Close())
		delete(s.files, path)
	}
	next.mu.Lock()
	s.ID, s.Dir, s.files, s.state, s.saved, s.placed = next.ID, next.Dir, next.files, next.state, next.saved, next.placed
	next.mu.Unlock()
	s.seal.adopt(s.state)
	s.pending, s.agentMD, s.nextSeq = 0, nil, 0
	if s.hookLines != nil {
		// The next session keeps Claude Code's transcript too, a file
		// of its own that starts empty, as its hooks' transcript_path.
		s.hookLines = &conversation.TranscriptLines{SessionID: s.ID, Cwd: s.hookLines.Cwd, UUID: newUUID}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close session logs: %w", err)
	}
	return nil
}

// CurrentID is the id of the session the record goes to now: the one
// Next moved on to, read under the session's lock, for goroutines that
// may ask while a /clear moves it (a watch joining the control socket).
func (s *Session) CurrentID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ID
}
