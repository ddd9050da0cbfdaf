package undo

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/git/gittest"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

var sh = gittest.Sh

// sessionS1 is a session "s1" of the repository at root, on the real file
// system, with its checkpoints (fail is told of one that fails) and its
// baseline taken.
func sessionS1(t *testing.T, root string, fail func(error)) (*rootfs.Fs, *memory.Session, *checkpoint.Checkpoints) {
	t.Helper()
	ctx := context.Background()
	repo, err := git.Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := memory.CreateSession(fs, root, "s1", memory.State{SessionID: "s1", Status: memory.StatusRunning, StartedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	cps := checkpoint.SessionCheckpoints(repo, s, root, "", nil, fail)
	cps.Record(ctx, git.Entry{Kind: git.KindBaseline}, git.KindBaseline)
	return fs, s, cps
}

// TestUndoPutsBackWhatTheRequestChanged: against a real repository and
// the session's own checkpoints, an undo puts back the files the last
// request changed, skips one the person changed since (saying so), is
// recorded as a checkpoint of its own, and `undo --skipped --force`
// then puts back that file alone.
func TestUndoPutsBackWhatTheRequestChanged(t *testing.T) {
	gittest.PersonEnv(t)
	root := gittest.Repo(t)
	sh(t, root, "printf '.ralph/\\n' > .gitignore && echo one > a.txt && echo one > b.txt && git add . && git commit -qm second")
	ctx := context.Background()
	fs, s, cps := sessionS1(t, root, func(err error) { t.Errorf("checkpoint: %v", err) })
	defer s.Close()
	// The request's two steps change a.txt and b.txt; the person then
	// changes b.txt again.
	sh(t, root, "echo two > a.txt")
	cps.Record(ctx, git.Entry{Kind: git.KindTurn, Turn: 1, Request: 1}, "turn-1")
	sh(t, root, "echo two > b.txt")
	cps.Record(ctx, git.Entry{Kind: git.KindTurn, Turn: 2, Request: 1}, "turn-2")
	sh(t, root, "echo mine > b.txt")

	w := undoWhere{fs: fs, root: root, target: Target{ID: "s1"}, again: "ralph undo s1"}
	res, err := undo(ctx, cps, w, readLog(fs, root, "s1"), Selection{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.What != "your last request (steps 1-2)" || !slices.Equal(res.Restored, []string{"a.txt"}) || !slices.Equal(res.Skipped, []string{"b.txt"}) ||
		!slices.Equal(res.Steps, []int{1, 2}) || res.Checkpoint == "" {
		t.Fatalf("undo: %+v", res)
	}
	if got := sh(t, root, "cat a.txt b.txt"); got != "one\nmine\n" {
		t.Fatalf("after the undo a.txt and b.txt hold %q", got)
	}
	log := readLog(fs, root, "s1")
	if last := log[len(log)-1]; last.Kind != git.KindUndo || last.Commit != res.Checkpoint {
		t.Fatalf("the undo's own checkpoint is not the log's last entry: %+v", last)
	}

	// What the undo skipped, alone, with --force.
	res, err = undo(ctx, cps, w, log, Selection{Skipped: true}, true)
	if err != nil || !slices.Equal(res.Restored, []string{"b.txt"}) {
		t.Fatalf("undo --skipped --force: %+v, %v", res, err)
	}
	if got := sh(t, root, "cat a.txt b.txt"); got != "one\none\n" {
		t.Fatalf("after undo --skipped a.txt and b.txt hold %q", got)
	}

	// A selection of nothing is ErrNothingToUndo, which exits 2.
	_, err = undo(ctx, cps, w, readLog(fs, root, "s1"), Selection{Step: 9}, false)
	if !errors.Is(err, ErrNothingToUndo) || project.ExitCode(err) != 2 {
		t.Fatalf("undo --step 9: %v (exit %d)", err, project.ExitCode(err))
	}
}
