package git

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// RecordExcept leaves the excepted files out of the checkpoint: not in
// its Files, not taken into its tree (which keeps them as the checkpoint
// before had them), and a change to them alone records nothing. A
// person's GIT_LITERAL_PATHSPECS, which would take the diff's exclusions
// for file names, changes nothing. Not parallel: it sets
// GIT_LITERAL_PATHSPECS (t.Setenv).
func TestRecordExceptLeavesTheExceptedFilesOut(t *testing.T) {
	t.Setenv("GIT_LITERAL_PATHSPECS", "1")
	dir := repo(t)
	write(t, filepath.Join(dir, "PLAN.md"), "- [ ] one\n- [ ] two\n")
	sh(t, dir, "git add PLAN.md && git commit -qm plan")
	r := open(t, dir)
	cps := NewCheckpoints(r, "except", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	except := []string{"PLAN.md"}
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	planIn := func(cp *Checkpoint) string { return sh(t, dir, "git show "+cp.Commit+":PLAN.md") }

	// Nothing changed: no checkpoint.
	if cp, err := cps.RecordExcept(ctx, "1", "task 1", except); err != nil || cp != nil {
		t.Fatalf("unchanged tree: %+v, %v", cp, err)
	}
	// Only the excepted file changed: no checkpoint either.
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [ ] two\n")
	if cp, err := cps.RecordExcept(ctx, "2", "task 2", except); err != nil || cp != nil {
		t.Fatalf("a change to the excepted file only: %+v, %v", cp, err)
	}
	// Both: only the other is listed and taken; the tree keeps the plan
	// as the baseline had it.
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [x] two\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	cp, err := cps.RecordExcept(ctx, "3", "task 3", except)
	if err != nil || cp == nil {
		t.Fatalf("both changed: %+v, %v", cp, err)
	}
	if want := []FileChange{{Path: "a.txt", Added: 1}}; !slices.Equal(cp.Files, want) || cp.Parent != base.Commit {
		t.Errorf("files %+v parent %s, want %+v parent %s", cp.Files, cp.Parent, want, base.Commit)
	}
	if got := planIn(cp); got != "- [ ] one\n- [ ] two\n" {
		t.Errorf("PLAN.md in the checkpoint = %q, want the baseline's", got)
	}
	// A file the turn's tools named that is excepted takes nothing.
	if cp, err := cps.RecordExcept(ctx, "4", "turn 4", except, "PLAN.md"); err != nil || cp != nil {
		t.Fatalf("only the excepted file named: %+v, %v", cp, err)
	}

	// A session that goes on in a new process, which does not know its
	// latest tree, leaves it out all the same.
	again := NewCheckpoints(r, "except", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), cp.Commit)
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [x] two\n- [ ] three\n")
	write(t, filepath.Join(dir, "c.txt"), "c\n")
	cp2, err := again.RecordExcept(ctx, "5", "task 5", except)
	if err != nil || cp2 == nil {
		t.Fatalf("after a restart: %+v, %v", cp2, err)
	}
	if want := []FileChange{{Path: "c.txt", Added: 1}}; !slices.Equal(cp2.Files, want) {
		t.Errorf("files after a restart %+v, want %+v", cp2.Files, want)
	}
	if got := planIn(cp2); got != "- [ ] one\n- [ ] two\n" {
		t.Errorf("PLAN.md after a restart = %q, want the baseline's", got)
	}
	// A plain Record takes it again.
	cp3, err := again.Record(ctx, "6", "turn 6")
	if err != nil || cp3 == nil || len(cp3.Files) != 1 || cp3.Files[0].Path != "PLAN.md" {
		t.Fatalf("a plain record: %+v, %v", cp3, err)
	}
}
