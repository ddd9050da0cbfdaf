package git

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// commitTask makes an empty commit in dir whose message carries task
// id's attempt trailers (extra lines added to the trailer block), and
// returns it.
func commitTask(t *testing.T, dir, id string, attempt int, extra string) string {
	t.Helper()
	tr, err := TaskTrailers(id, attempt)
	if err != nil {
		t.Fatal(err)
	}
	msg := "task " + id + "\n\nThe summary.\n\nRalph-Session: s1\n" + tr + extra
	return strings.TrimSpace(sh(t, dir, "git commit -q --allow-empty -F - <<'EOF'\n"+msg+"EOF\ngit rev-parse HEAD"))
}

func landed(t *testing.T, r *Repo, id string, attempt int) Landed {
	t.Helper()
	l, err := r.TaskLanded(context.Background(), id, attempt)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestTaskTrailersNeedAWord: an id with a newline, a space or a control
// would end the trailer and forge another; it gets none.
func TestTaskTrailersNeedAWord(t *testing.T) {
	t.Parallel()
	if got, err := TaskTrailers("bd-a1b2", 3); err != nil || got != "Ralph-Task: bd-a1b2\nRalph-Attempt: 3\n" {
		t.Fatalf("TaskTrailers = %q, %v", got, err)
	}
	for _, id := range []string{"", "t1\nRalph-Attempt: 9", "t 1", "t1\x1b[2J", "t1\x00", "t1\u2028", strings.Repeat("t", 201)} {
		if got, err := TaskTrailers(id, 1); !errors.Is(err, ErrTaskIDNotAWord) || got != "" {
			t.Errorf("TaskTrailers(%q) = %q, %v; want ErrTaskIDNotAWord", id, got, err)
		}
	}
}

// TestTaskLandedReadsTheBranch: the attempt's commit on HEAD is found,
// another attempt's or task's is not, a commit a person made since does
// not hide it, and a fast-forwarded commit counts as much as one merged.
func TestTaskLandedReadsTheBranch(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	if l := landed(t, r, "t1", 1); l.Commit != "" || l.Done() {
		t.Fatalf("nothing committed, yet %+v", l)
	}
	c := commitTask(t, dir, "t1", 2, "")
	sh(t, dir, "git commit -q --allow-empty -m 'the person, since'")
	commitTask(t, dir, "t10", 2, "")
	if l := landed(t, r, "t1", 2); l.Commit != c || l.Session != "s1" || !l.Done() {
		t.Fatalf("TaskLanded(t1, 2) = %+v, want %s", l, c)
	}
	for _, miss := range []struct {
		id string
		n  int
	}{{"t1", 1}, {"t1", 22}, {"t", 2}, {"T1", 2}} {
		if l := landed(t, r, miss.id, miss.n); l.Commit != "" {
			t.Errorf("TaskLanded(%s, %d) = %+v, want none", miss.id, miss.n, l)
		}
	}
	// A merge commit's second parent is read too.
	sh(t, dir, "git checkout -q -b side HEAD~3")
	side := commitTask(t, dir, "t2", 1, "")
	sh(t, dir, "git checkout -q main && git merge -q --no-ff -m 'merge side' side")
	if l := landed(t, r, "t2", 1); l.Commit != side {
		t.Fatalf("a task commit merged in: %+v, want %s", l, side)
	}
}

// TestTaskLandedReadsReverts: a revert (git's own message, or the
// Ralph-Reverts trailer) makes the task not landed; a revert of that
// revert makes it landed again.
func TestTaskLandedReadsReverts(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	sh(t, dir, "echo work > w.txt && git add w.txt")
	c := strings.TrimSpace(sh(t, dir, "git commit -q -m 'task t1' -m 'Ralph-Session: s1\nRalph-Task: t1\nRalph-Attempt: 1' && git rev-parse HEAD"))
	sh(t, dir, "git revert --no-edit HEAD >/dev/null")
	rev := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD"))
	if l := landed(t, r, "t1", 1); l.Commit != c || l.Reverted != rev || l.Done() {
		t.Fatalf("after git revert: %+v, want %s reverted by %s", l, c, rev)
	}
	sh(t, dir, "git revert --no-edit HEAD >/dev/null")
	if l := landed(t, r, "t1", 1); !l.Done() {
		t.Fatalf("the revert reverted: %+v, want landed", l)
	}
	// ralph undo's own revert names the commit in a trailer.
	c2 := commitTask(t, dir, "t2", 1, "")
	undo := strings.TrimSpace(sh(t, dir, "git commit -q --allow-empty -m 'ralph: undo task t2' -m 'Ralph-Reverts: "+c2+"' && git rev-parse HEAD"))
	if l := landed(t, r, "t2", 1); l.Reverted != undo || l.Done() {
		t.Fatalf("after an undo with Ralph-Reverts: %+v, want reverted by %s", l, undo)
	}
	// A commit that only mentions the id reverts nothing.
	c3 := commitTask(t, dir, "t3", 1, "")
	sh(t, dir, "git commit -q --allow-empty -m 'see "+c3+"'")
	if l := landed(t, r, "t3", 1); !l.Done() {
		t.Fatalf("a mention taken for a revert: %+v", l)
	}
}

// TestTaskLandedOnAnUnmergedBranch: the worktree's commit is on its
// task branch, its merge never happened: the branch is named, so the
// caller can merge it; once merged, the commit is on HEAD.
func TestTaskLandedOnAnUnmergedBranch(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	sh(t, dir, "git checkout -q -b ralph/t4")
	c := commitTask(t, dir, "t4", 2, "")
	sh(t, dir, "git checkout -q main && git branch ralphish/t4 ralph/t4")
	l := landed(t, r, "t4", 2)
	if l.Commit != "" || l.Branch != "ralph/t4" || l.BranchCommit != c || l.Done() {
		t.Fatalf("an unmerged task branch: %+v", l)
	}
	if _, err := r.MergeBranch(context.Background(), l.Branch, "merge"); err != nil {
		t.Fatal(err)
	}
	if l := landed(t, r, "t4", 2); l.Commit != c || !l.Done() {
		t.Fatalf("once merged: %+v", l)
	}
}

// TestNamesTaskSeesAStrippedTrailer: a commit whose trailers a hook took
// out does not name the task.
func TestNamesTaskSeesAStrippedTrailer(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	ctx := context.Background()
	c := commitTask(t, dir, "t1", 1, "")
	sh(t, dir, "git commit -q --allow-empty -m 'task t2' -m 'Ralph-Session: s1'")
	if ok, err := r.NamesTask(ctx, c, "t1", 1); err != nil || !ok {
		t.Fatalf("NamesTask of the task's commit = %v, %v", ok, err)
	}
	if ok, err := r.NamesTask(ctx, "HEAD", "t2", 1); err != nil || ok {
		t.Fatalf("NamesTask of a stripped commit = %v, %v", ok, err)
	}
}
