package cli

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/web"
)

// TestOneSessionIsTheOneAllSessionsLists: ralph serve reads the one
// session a page names (oneSession) as the listing of every session
// (allSessions) has it, for each session listed; an id no project of that
// key keeps, one left empty, a path's pieces and another project's
// session under this key are not found.
func TestOneSessionIsTheOneAllSessionsLists(t *testing.T) {
	fs := afero.NewOsFs()
	home := t.TempDir()
	a, b, gone := filepath.Join(home, "a"), filepath.Join(home, "b"), filepath.Join(home, "gone")
	mk := func(root, id string, st memory.State) {
		t.Helper()
		s, err := memory.CreateSession(fs, root, id, st)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	mk(a, "20260101T010000Z-aaaa11111111", memory.State{Status: memory.StatusCompleted, Mode: "oneshot", Turns: 2})
	mk(a, "20260101T020000Z-aaaa22222222", memory.State{Status: memory.StatusRunning, Mode: "chat"})
	mk(a, "20260101T030000Z-aaaa33333333", memory.State{Status: memory.StatusCompleted, Mode: "chat"}) // left empty
	mk(b, "20260101T040000Z-bbbb11111111", memory.State{Status: memory.StatusCompleted, Mode: "run", Turns: 1})
	projects := []memory.RegistryEntry{{Root: a}, {Root: b}, {Root: gone, SessionID: "20260101T050000Z-gone11111111", Mode: "run"}}
	all := allSessions(fs, projects)
	if len(all) != 4 {
		t.Fatalf("allSessions listed %d sessions, want 4: %+v", len(all), all)
	}
	for _, want := range all {
		key := web.ProjectKey(want.Root)
		got, ok := oneSession(fs, projects, keyIs(key), want.SessionID)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("oneSession(%s, %s) = %+v, %v; allSessions lists %+v", filepath.Base(want.Root), want.SessionID, got, ok, want)
		}
	}
	for _, c := range []struct{ root, id string }{
		{a, "20260101T030000Z-aaaa33333333"}, // empty: not listed
		{a, "20260101T040000Z-bbbb11111111"}, // b's, under a's key
		{a, "nosuch"},
		{a, "../b"},
		{a, ""},
		{gone, "20260101T060000Z-gone22222222"},
	} {
		if got, ok := oneSession(fs, projects, keyIs(web.ProjectKey(c.root)), c.id); ok {
			t.Errorf("oneSession(%s, %q) found %+v", filepath.Base(c.root), c.id, got)
		}
	}
}
