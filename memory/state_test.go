package memory

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// FuzzLoadStateNeverPanics: whatever bytes session.json holds, loading it
// returns a state or an error (corrupt, newer), never a panic, and a state
// it accepts has a session id and a known status.
func FuzzLoadStateNeverPanics(f *testing.F) {
	f.Add([]byte(`{"version":1,"session_id":"s","status":"running"}`))
	f.Add([]byte(`{"version":99,"session_id":"s","status":"running"}`))
	f.Add([]byte(`{"version":1,"session_id":"s","status":"bogus"}`))
	f.Add([]byte(`{"version":1,"session_id":"s","sta`))
	f.Add([]byte(`null`))
	f.Add([]byte{0xff, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := afero.NewMemMapFs()
		_ = afero.WriteFile(fs, "/p/"+SessionFile, data, 0o644)
		st, err := LoadState(fs, "/p")
		if err != nil {
			if !errors.Is(err, ErrCorruptState) && !errors.Is(err, ErrNewerState) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if st.SessionID == "" || !validStatus(st.Status) || st.Version != StateVersion {
			t.Fatalf("accepted a bad state: %+v", st)
		}
	})
}

func TestLoadStateErrors(t *testing.T) {
	fs := afero.NewMemMapFs()
	if _, err := LoadState(fs, "/p"); !errors.Is(err, ErrNoSession) {
		t.Fatalf("missing file: %v", err)
	}
	_ = afero.WriteFile(fs, "/p/"+SessionFile, []byte(`{"version":2,"session_id":"s","status":"running"}`), 0o644)
	if _, err := LoadState(fs, "/p"); !errors.Is(err, ErrNewerState) {
		t.Fatalf("newer version: %v", err)
	}
	_ = afero.WriteFile(fs, "/p/"+SessionFile, []byte(`{"version":1,"session_id":"s","st`), 0o644)
	_, err := LoadState(fs, "/p")
	var ce *CorruptStateError
	if !errors.As(err, &ce) || ce.Path != "/p/"+SessionFile {
		t.Fatalf("corrupt: %v", err)
	}
}

// TestRecordedStateGoesByTheSessionsOwnRecords: the summary is not made
// durable by itself, so a crash of the machine may leave it behind the
// sessions' own records, or without it; RecordedState reads past it.
func TestRecordedStateGoesByTheSessionsOwnRecords(t *testing.T) {
	fs := afero.NewMemMapFs()
	if _, err := RecordedState(fs, root, SessionDirNames(fs, root)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("no session at all: %v", err)
	}
	a, err := CreateSession(fs, root, "20250301T120000Z-aaaaaa", State{Status: StatusRunning, Mode: "oneshot"})
	if err != nil {
		t.Fatal(err)
	}
	behind := readString(t, fs, filepath.Join(root, SessionFile)) // "running"
	if err := a.SaveState(func(st *State) { st.Status = StatusCompleted }); err != nil {
		t.Fatal(err)
	}
	check := func(what, id, status string) {
		t.Helper()
		st, err := RecordedState(fs, root, SessionDirNames(fs, root))
		if err != nil || st.SessionID != id || st.Status != status {
			t.Fatalf("%s: %s %s %v, want %s %s", what, st.SessionID, st.Status, err, id, status)
		}
	}
	check("summary up to date", a.ID, StatusCompleted)
	_ = afero.WriteFile(fs, filepath.Join(root, SessionFile), []byte(behind), 0o644)
	check("summary behind its session", a.ID, StatusCompleted)
	_ = fs.Remove(filepath.Join(root, SessionFile))
	check("summary lost", a.ID, StatusCompleted)

	// A newer session whose summary never landed.
	done := readString(t, fs, filepath.Join(a.Dir, "session.json"))
	b, err := CreateSession(fs, root, "20250301T130000Z-bbbbbb", State{Status: StatusRunning, Mode: "run"})
	if err != nil {
		t.Fatal(err)
	}
	_ = afero.WriteFile(fs, filepath.Join(root, SessionFile), []byte(done), 0o644)
	check("summary names the session before", b.ID, StatusRunning)
	// An older session resumed after the newest one: its record is newer.
	if err := a.SaveState(func(st *State) { st.Status = StatusRunning }); err != nil {
		t.Fatal(err)
	}
	check("older session resumed", a.ID, StatusRunning)

	// A corrupt summary is reported, so recovery sets it aside.
	_ = afero.WriteFile(fs, filepath.Join(root, SessionFile), []byte(`{"version":1,`), 0o644)
	if _, err := RecordedState(fs, root, SessionDirNames(fs, root)); !errors.Is(err, ErrCorruptState) {
		t.Fatalf("corrupt summary: %v", err)
	}
}

// TestRecordedStateAmongSessionsOfOneSecond: of many sessions started in
// the same second (a script's one-shots), the one whose record was saved
// last is found, whichever its name, though only it is read.
func TestRecordedStateAmongSessionsOfOneSecond(t *testing.T) {
	fs := afero.NewMemMapFs()
	ids := []string{"20250301T140000Z-001aaaaaaaaa", "20250301T140000Z-002bbbbbbbbb", "20250301T140000Z-003ccccccccc"}
	var sessions []*Session
	for _, id := range ids {
		s, err := CreateSession(fs, root, id, State{Status: StatusRunning, Mode: "oneshot"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveState(func(st *State) { st.Status = StatusCompleted }); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	// The middle one was resumed last and left running by a crash of the
	// machine that lost the summary's update.
	summary := readString(t, fs, filepath.Join(root, SessionFile))
	time.Sleep(2 * time.Millisecond)
	if err := sessions[1].SaveState(func(st *State) { st.Status = StatusRunning }); err != nil {
		t.Fatal(err)
	}
	_ = afero.WriteFile(fs, filepath.Join(root, SessionFile), []byte(summary), 0o644)
	st, err := RecordedState(fs, root, SessionDirNames(fs, root))
	if err != nil || st.SessionID != ids[1] || st.Status != StatusRunning {
		t.Fatalf("got %s %s %v, want %s running", st.SessionID, st.Status, err, ids[1])
	}
	if got := lastSaved(fs, root, ids); len(got) != 1 || got[0] != ids[1] {
		t.Fatalf("lastSaved = %v, want [%s]", got, ids[1])
	}
}
