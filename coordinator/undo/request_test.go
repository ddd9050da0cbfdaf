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
