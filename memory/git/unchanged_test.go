package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Unchanged proves, from ralph's index, that the files a turn wrote are
// as its checkpoint has them, in a process that does not trust that
// index yet; a file changed since (even keeping its size), one removed,
// one that appeared where the checkpoint has none, or one changed in the
// instant the index was written proves nothing.
func TestUnchangedProvesFromTheIndex(t *testing.T) {
	t.Parallel()
	unchangedProves(t, false)
}

// Unchanged reads a split index (ralph splits a large one, splitindex.go):
// the entries of its shared part, replaced and removed as its own part
// says.
func TestUnchangedReadsASplitIndex(t *testing.T) {
	defer func(n uint32) { splitMinEntries = n }(splitMinEntries)
	splitMinEntries = 0
	unchangedProves(t, true)
}

func unchangedProves(t *testing.T, split bool) {
	dir := repo(t)
	if split {
		// Every change goes to the index's own part, as entries that
		// replace or add to the shared part's.
		sh(t, dir, "git config splitIndex.maxPercentChange 100")
	}
	sh(t, dir, "mkdir d && printf 'one\\n' > d/one.txt && printf 'two\\n' > two.txt && git add . && git commit -qm files")
	r := open(t, dir)
	index := filepath.Join(t.TempDir(), "index")
	ctx := context.Background()
	first := NewCheckpoints(r, "s", index, filepath.Join(dir, ".ralph"), "")
	if _, err := first.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "printf 'ONE\\n' > d/one.txt && printf 'new\\n' > d/new.txt && rm two.txt && chmod +x d/new.txt")
	// Files written in the index's own instant are racy to git: the
	// turn's checkpoint comes a moment after them, as it does in a run.
	time.Sleep(20 * time.Millisecond)
	turn, err := first.Record(ctx, "1", "turn")
	if err != nil || turn == nil {
		t.Fatalf("%+v, %v", turn, err)
	}
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if shared, err := sharedIndexOf(data); err != nil || (shared != "") != split {
		t.Fatalf("the index's shared part: %q, %v; want one: %v", shared, err, split)
	}
	paths := []string{"d/one.txt", "d/new.txt", "two.txt", "never.txt"}
	later := func() *Checkpoints { return NewCheckpoints(r, "s", index, filepath.Join(dir, ".ralph"), turn.Commit) }
	if cps := later(); !cps.Unchanged(ctx, paths) {
		t.Fatal("no proof for files as the checkpoint has them")
	}
	for _, change := range []string{
		"printf 'TWO\\n' > d/one.txt", // the same size
		"rm d/new.txt",
		"printf 'back\\n' > two.txt",
		"printf 'x\\n' > never.txt",
		"chmod -x d/new.txt",
	} {
		sh(t, dir, change)
		if cps := later(); cps.Unchanged(ctx, paths) {
			t.Fatalf("after %s: a proof", change)
		}
		sh(t, dir, "git checkout -q "+turn.Commit+" -- d && rm -f two.txt never.txt && chmod +x d/new.txt")
		// Back as the checkpoint has them, with new stat data: a status
		// would now hash them, and Unchanged proves nothing.
		if cps := later(); cps.Unchanged(ctx, paths) {
			t.Fatalf("after %s and back: a proof from stat data that is not the index's", change)
		}
		// The checkpoint's index catches up.
		if _, err := later().Record(ctx, "x", "again"); err != nil {
			t.Fatal(err)
		}
	}
	// An entry whose file changed in the instant the index was written
	// proves nothing, whatever its stat data says.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(index, future.Add(-2*time.Hour), future.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if cps := later(); cps.Unchanged(ctx, paths) {
		t.Fatal("a proof from an index written before its entries' files")
	}
}
