package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// While checkpoints leave the task file out, ralph's index marks it
// assume-unchanged, so that git's status does not hash it; a checkpoint
// that takes it in clears the mark first, in the same process and in a
// later one that finds the list a killed one left, and a list that is
// not a plain file clears every mark.
func TestHeldMarksNeverOutliveTheExcept(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, "PLAN.md"), "- [ ] one\n")
	sh(t, dir, "git add PLAN.md && git commit -qm plan")
	r := open(t, dir)
	index := filepath.Join(t.TempDir(), "index")
	ctx := context.Background()
	marks := func() string {
		t.Helper()
		var held []string
		for _, l := range strings.Split(sh(t, dir, "GIT_INDEX_FILE="+index+" git ls-files -v"), "\n") {
			if len(l) > 2 && l[0] >= 'a' && l[0] <= 'z' {
				held = append(held, l[2:])
			}
		}
		return strings.Join(held, ",")
	}
	except := []string{"PLAN.md"}

	cps := NewCheckpoints(r, "held", index, filepath.Join(dir, ".ralph"), "")
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	cp, err := cps.RecordExcept(ctx, "1", "task 1", except)
	if err != nil || cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "a.txt" {
		t.Fatalf("task 1: %+v, %v", cp, err)
	}
	if got := marks(); got != "PLAN.md" {
		t.Fatalf("marks while the loop runs = %q, want PLAN.md", got)
	}
	if _, err := os.Stat(index + heldSuffix); err != nil {
		t.Fatalf("no list of the held paths: %v", err)
	}
	// A checkpoint that leaves out more keeps the marks as they are.
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	if _, err := cps.RecordExcept(ctx, "1b", "task 1b", append(except, "NOTES.md")); err != nil {
		t.Fatal(err)
	}
	if got := marks(); got != "PLAN.md" {
		t.Fatalf("marks after a wider except = %q, want PLAN.md", got)
	}

	// The same process takes the plan in again: the mark goes first.
	cp, err = cps.Record(ctx, "2", "turn 2")
	if err != nil || cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "PLAN.md" {
		t.Fatalf("a plain record after the loop: %+v, %v", cp, err)
	}
	if got := marks(); got != "" {
		t.Errorf("marks after a plain record = %q, want none", got)
	}
	if _, err := os.Stat(index + heldSuffix); !os.IsNotExist(err) {
		t.Errorf("the list outlived the marks: %v", err)
	}

	// A process killed with the marks on: the next one clears them
	// before its first status.
	if _, err := cps.RecordExcept(ctx, "3", "task 3", except); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [ ] two\n")
	again := NewCheckpoints(r, "held", index, filepath.Join(dir, ".ralph"), cp.Commit)
	cp, err = again.Record(ctx, "4", "turn 4")
	if err != nil || cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "PLAN.md" {
		t.Fatalf("a plain record in a new process: %+v, %v", cp, err)
	}
	if got := marks(); got != "" {
		t.Errorf("marks after a new process's record = %q, want none", got)
	}

	// A link planted at the list: removed, never followed, and every
	// mark cleared.
	if _, err := again.RecordExcept(ctx, "5", "task 5", except); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	write(t, outside, "keep\n")
	if err := os.Remove(index + heldSuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, index+heldSuffix); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "PLAN.md"), "- [x] one\n- [x] two\n")
	third := NewCheckpoints(r, "held", index, filepath.Join(dir, ".ralph"), cp.Commit)
	cp, err = third.Record(ctx, "6", "turn 6")
	if err != nil || cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "PLAN.md" {
		t.Fatalf("a plain record after a link at the list: %+v, %v", cp, err)
	}
	if got := marks(); got != "" {
		t.Errorf("marks after a link at the list = %q, want none", got)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep\n" {
		t.Errorf("the link's target changed: %q, %v", b, err)
	}
}
