package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestDamagedOwnRecordIsKeptAndRestored: a session's own record cut short
// is renamed aside, never dropped, and its state, with the sealed run
// settings and the counters, comes back from the summary that names the
// same session; when the summary names another session, the state is
// rebuilt from the logs without settings, and the repair says so (issue
// 67).
func TestDamagedOwnRecordIsKeptAndRestored(t *testing.T) {
	fs := afero.NewOsFs()
	key, err := StateKey(fs, filepath.Join(t.TempDir(), "ralph"))
	if err != nil {
		t.Fatal(err)
	}
	for _, summaryNamesIt := range []bool{true, false} {
		root := t.TempDir()
		st := State{Status: StatusInterrupted, Mode: "run", Iteration: 5, Run: &RunConfig{Agent: "claude", Verify: "test -f /nonexistent"}}
		st.SessionID = "20260101T000000Z-aaaaaaaaaaaa"
		st.Seal = Seal(key, st)
		s, err := CreateSession(fs, root, st.SessionID, st)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if !summaryNamesIt {
			other := st
			other.SessionID = "20260101T000001Z-bbbbbbbbbbbb"
			o, err := CreateSession(fs, root, other.SessionID, other)
			if err != nil {
				t.Fatal(err)
			}
			_ = o.Close()
		}
		own := filepath.Join(SessionDir(root, st.SessionID), "session.json")
		data, err := os.ReadFile(own)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(own, data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		s, _, err = OpenSession(fs, root, st.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		rep := s.Repaired
		if rep == nil || rep.Aside == "" || !strings.Contains(rep.Problem, "is damaged") {
			t.Fatalf("summary names it %v: repair %+v, want the damaged record kept aside", summaryNamesIt, rep)
		}
		if kept, err := os.ReadFile(filepath.Join(root, rep.Aside)); err != nil || string(kept) != string(data[:len(data)/2]) {
			t.Fatalf("the damaged record was not kept as %s: %v", rep.Aside, err)
		}
		got := s.State()
		if summaryNamesIt {
			if rep.Restored != SessionFile || got.Run == nil || got.Run.Verify != st.Run.Verify || got.Iteration != 5 || CheckSeal(key, got) != nil {
				t.Fatalf("restored %+v (run %+v) from %q, want the sealed settings and counters back", got, got.Run, rep.Restored)
			}
			continue
		}
		if rep.Restored != "" || got.Run != nil || got.Seal != "" {
			t.Fatalf("rebuilt %+v from %q, want no settings and no seal", got, rep.Restored)
		}
		if !strings.Contains(rep.Sentence(st.SessionID), "without the settings it saved") {
			t.Fatalf("sentence %q", rep.Sentence(st.SessionID))
		}
	}
}
