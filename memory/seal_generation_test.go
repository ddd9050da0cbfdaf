package memory

import (
	"errors"
	"testing"

	"github.com/spf13/afero"
)

// TestGenerationsRefuseAnOlderRecord: the store accepts the record of its
// generation and the one after it (whose own write of the store was lost
// to a crash), and refuses any older or further one.
func TestGenerationsRefuseAnOlderRecord(t *testing.T) {
	g := OpenGenerations(afero.NewOsFs(), t.TempDir(), t.TempDir())
	for _, gen := range []uint64{0, 1} {
		if err := g.CheckFresh("s1", gen); err != nil {
			t.Fatalf("generation %d of a session the store does not know: %v", gen, err)
		}
	}
	// The record of generation 1 was accepted: the store says 1 now.
	if n, err := g.Latest("s1"); err != nil || n != 1 {
		t.Fatalf("Latest = %d, %v; want 1", n, err)
	}
	if err := g.atLeast("s1", 3); err != nil {
		t.Fatal(err)
	}
	// In order: a record accepted moves the store on, so 4 is checked last.
	for _, c := range []struct {
		gen   uint64
		fresh bool
	}{{0, false}, {1, false}, {2, false}, {6, false}, {3, true}, {4, true}} {
		err := g.CheckFresh("s1", c.gen)
		if c.fresh != (err == nil) || !c.fresh && !errors.Is(err, ErrStale) {
			t.Errorf("generation %d: %v, want fresh %v", c.gen, err, c.fresh)
		}
	}
	if _, err := g.path("../x"); err == nil {
		t.Error("a session id with a slash named a file")
	}
}

// TestSealedSessionKeepsItsGeneration: a session's saves count a new
// generation only when its sealed settings change, and the store follows
// once the record is written; a record saved before is then stale.
func TestSealedSessionKeepsItsGeneration(t *testing.T) {
	root := t.TempDir()
	fs := afero.NewOsFs()
	key := make([]byte, 32)
	gens := OpenGenerations(fs, t.TempDir(), root)
	st := State{SessionID: "s1", Run: &RunConfig{MaxIterations: 1}}
	SealNew(key, &st)
	s, err := CreateSession(fs, root, "s1", st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SealWith(key, gens)
	if err := s.SaveState(func(st *State) { st.Status = "running" }); err != nil {
		t.Fatal(err)
	}
	first, err := LoadSessionState(fs, root, "s1")
	if err != nil || first.Generation != 1 {
		t.Fatalf("first record: generation %d, %v", first.Generation, err)
	}
	if err := s.SaveState(func(st *State) { st.Run = &RunConfig{MaxIterations: 1, Verify: "make test"} }); err != nil {
		t.Fatal(err)
	}
	now, err := LoadSessionState(fs, root, "s1")
	if err != nil || now.Generation != 2 || CheckSeal(key, now) != nil {
		t.Fatalf("record after the verify: generation %d, seal %v, %v", now.Generation, CheckSeal(key, now), err)
	}
	if err := gens.CheckFresh("s1", now.Generation); err != nil {
		t.Fatalf("the latest record: %v", err)
	}
	if err := gens.CheckFresh("s1", first.Generation); !errors.Is(err, ErrStale) {
		t.Fatalf("the first record after the second was saved: %v, want ErrStale", err)
	}
}
