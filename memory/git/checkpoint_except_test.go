package git

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// RecordExcept takes the excepted files into the checkpoint's tree like
// any change, leaves them out of its Files, and still tells a tree that
// changed only in them from one that did not change at all. A person's
// GIT_LITERAL_PATHSPECS, which would take the diff's exclusions for file
// names, changes nothing. Not parallel: open sets the environment
// (t.Setenv), as this test does.
func TestRecordExceptTakesTheExceptedFilesButDoesNotListThem(t *testing.T) {
	t.Setenv("GIT_LITERAL_PATHSPECS", "1")
	dir := repo(t)
	write(t, filepath.Join(dir, "PLAN.md"), "- [ ] one\n- [ ] two\n")
	sh(t, dir, "git add PLAN.md && git commit -qm plan")
	r := open(t, dir)
	cps := NewCheckpoints(r, "except", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	except := []string{"PLAN.md"}
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}

	// Nothing changed: no checkpoint.
	if cp, err := cps.RecordExcept(ctx, "1", "task 1", except); err != nil || cp != nil {
		t.Fatalf("unchanged tree: %+v, %v", cp, err)
	}
	// Only the excepted file changed: a checkpoint that holds it, with
	// no files listed.
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [ ] two\n")
	cp, err := cps.RecordExcept(ctx, "2", "task 2", except)
	if err != nil || cp == nil {
		t.Fatalf("a change to the excepted file only: %+v, %v", cp, err)
	}
	if len(cp.Files) != 0 {
		t.Errorf("files %+v, want none", cp.Files)
	}
	if got := sh(t, dir, "git show "+cp.Commit+":PLAN.md"); got != "- [x] one\n- [ ] two\n" {
		t.Errorf("PLAN.md in the checkpoint = %q", got)
	}
	// Both: only the other is listed, and the tree has both.
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [x] two\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	cp2, err := cps.RecordExcept(ctx, "3", "task 3", except)
	if err != nil || cp2 == nil {
		t.Fatalf("both changed: %+v, %v", cp2, err)
	}
	if want := []FileChange{{Path: "a.txt", Added: 1}}; !slices.Equal(cp2.Files, want) || cp2.Parent != cp.Commit {
		t.Errorf("files %+v parent %s, want %+v parent %s", cp2.Files, cp2.Parent, want, cp.Commit)
	}
	if got := sh(t, dir, "git show "+cp2.Commit+":PLAN.md"); got != "- [x] one\n- [x] two\n" {
		t.Errorf("PLAN.md in the checkpoint = %q", got)
	}
	// Nothing changed since: no checkpoint.
	if cp, err := cps.RecordExcept(ctx, "4", "task 4", except); err != nil || cp != nil {
		t.Fatalf("unchanged tree: %+v, %v", cp, err)
	}

	// A session that goes on in a new process does not know its latest
	// tree: its first checkpoint diffs every file, as Record does.
	again := NewCheckpoints(r, "except", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), cp2.Commit)
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [x] two\n- [ ] three\n")
	cp3, err := again.RecordExcept(ctx, "5", "task 5", except)
	if err != nil || cp3 == nil {
		t.Fatalf("after a restart: %+v, %v", cp3, err)
	}
	if want := []FileChange{{Path: "PLAN.md", Added: 1}}; !slices.Equal(cp3.Files, want) {
		t.Errorf("files after a restart %+v, want %+v", cp3.Files, want)
	}
	// and the next leaves it out again.
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [x] two\n- [x] three\n")
	cp4, err := again.RecordExcept(ctx, "6", "task 6", except)
	if err != nil || cp4 == nil || len(cp4.Files) != 0 {
		t.Fatalf("the second after a restart: %+v, %v", cp4, err)
	}
}
