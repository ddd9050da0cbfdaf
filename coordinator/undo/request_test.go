package undo

import (
	"slices"
	"testing"

	"github.com/ralph-dev/ralph/memory/git"
)

// TestSelectRequest: --request N picks every step of the request that
// began at session turn N, and no other request's, across the resume
// entry between them; a request that changed nothing is nothing to show.
func TestSelectRequest(t *testing.T) {
	cp := func(commit, parent, file string) git.Checkpoint {
		return git.Checkpoint{Commit: commit, Parent: parent, Files: []git.FileChange{{Path: file}}}
	}
	log := []git.Entry{
		{Kind: git.KindBaseline, Checkpoint: git.Checkpoint{Commit: "c0"}},
		{Kind: git.KindTurn, Turn: 1, Request: 1, Checkpoint: cp("c1", "c0", "a")},
		{Kind: git.KindTurn, Turn: 2, Request: 1, Checkpoint: cp("c2", "c1", "b")},
		{Kind: git.KindResume, Checkpoint: cp("c3", "c2", "x")},
		{Kind: git.KindTurn, Turn: 3, Request: 3, Checkpoint: cp("c4", "c3", "c")},
	}
	c, err := selectEntries(nil, log, Selection{Request: 1}, ErrNothingToShow)
	if err != nil {
		t.Fatal(err)
	}
	if c.From != "c0" || c.To != "c2" || !slices.Equal(c.Files, []string{"a", "b"}) || !slices.Equal(c.Steps, []int{1, 2}) || c.Request != 1 {
		t.Errorf("request 1: %+v", c)
	}
	c, err = selectEntries(nil, log, Selection{Request: 3}, ErrNothingToShow)
	if err != nil || c.From != "c3" || c.To != "c4" || !slices.Equal(c.Files, []string{"c"}) {
		t.Errorf("request 3: %+v, %v", c, err)
	}
	if _, err := selectEntries(nil, log, Selection{Request: 2}, ErrNothingToShow); err == nil {
		t.Error("request 2 began no step, yet something was selected")
	}
}

// TestSelectedChangesSayWhetherUndone: a request an undo took back is
// Undone, until an undo of that undo puts it in place again; a request
// with one step undone is still (partly) in place.
func TestSelectedChangesSayWhetherUndone(t *testing.T) {
	cp := func(ref, commit, parent, file string) git.Checkpoint {
		return git.Checkpoint{Ref: ref, Commit: commit, Parent: parent, Files: []git.FileChange{{Path: file}}}
	}
	log := []git.Entry{
		{Kind: git.KindBaseline, Checkpoint: git.Checkpoint{Ref: "r0", Commit: "c0"}},
		{Kind: git.KindTurn, Turn: 1, Request: 1, Checkpoint: cp("r1", "c1", "c0", "a")},
		{Kind: git.KindTurn, Turn: 2, Request: 1, Checkpoint: cp("r2", "c2", "c1", "b")},
		{Kind: git.KindTurn, Turn: 3, Request: 3, Checkpoint: cp("r3", "c3", "c2", "c")},
	}
	undone := func(log []git.Entry, r int) bool {
		t.Helper()
		c, err := selectEntries(nil, log, Selection{Request: r}, ErrNothingToShow)
		if err != nil {
			t.Fatal(err)
		}
		return c.Undone
	}
	if undone(log, 1) || undone(log, 3) {
		t.Error("nothing was undone, yet a request says so")
	}
	log = append(log, git.Entry{Kind: git.KindUndo, Undone: "r3", Checkpoint: cp("u1", "c4", "c3", "c")})
	if undone(log, 1) || !undone(log, 3) {
		t.Errorf("after undoing request 3: request 1 undone %v, request 3 undone %v", undone(log, 1), undone(log, 3))
	}
	log = append(log, git.Entry{Kind: git.KindUndo, Undone: "u1", Checkpoint: cp("u2", "c5", "c4", "c")})
	if undone(log, 3) {
		t.Error("the undo of the undo put request 3 back, yet it says undone")
	}
	log = append(log, git.Entry{Kind: git.KindUndo, Undone: "r2", Checkpoint: cp("u3", "c6", "c5", "b")})
	if undone(log, 1) {
		t.Error("one step of request 1 undone, yet the whole request says undone")
	}
}
