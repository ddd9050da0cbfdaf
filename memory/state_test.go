package memory

import (
	"errors"
	"testing"

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
