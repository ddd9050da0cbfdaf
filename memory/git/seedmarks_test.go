package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSeededMarksHideNoChange: a command of the model's marked files of
// the person's index assume-unchanged and skip-worktree; ralph's index,
// a copy of it, clears the marks before its first status, so the
// model's later changes to those files are in the checkpoint (and so in
// diff and undo). A sparse checkout's skip-worktree marks stay: the
// files they mark are not on disk by design, and are no deletion.
func TestSeededMarksHideNoChange(t *testing.T) {
	t.Parallel()
	for _, sparse := range []bool{false, true} {
		dir := repo(t)
		sh(t, dir, "printf 'x\\n' > x.txt && printf 'y\\n' > y.txt && git add . && git commit -qm xy && "+
			"git update-index --assume-unchanged x.txt && git update-index --skip-worktree y.txt")
		if sparse {
			// As a sparse checkout leaves it: y.txt marked, not on disk.
			sh(t, dir, "git config core.sparseCheckout true && rm y.txt")
		}
		r := open(t, dir)
		cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
		ctx := context.Background()
		if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
			t.Fatal(err)
		}
		sh(t, dir, "printf 'model\\n' > x.txt")
		if !sparse {
			sh(t, dir, "printf 'model\\n' > y.txt")
		}
		cp, err := cps.Record(ctx, "1", "turn")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if cp != nil {
			for _, f := range cp.Files {
				got = append(got, f.Path)
			}
		}
		want := []string{"x.txt", "y.txt"}
		if sparse {
			want = []string{"x.txt"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("sparse %v: the checkpoint took %v, want %v", sparse, got, want)
		}
	}
}

// TestIndexMarked: the seed clears marks (a git ls-files) only where the
// person's index has one, or cannot be read here.
func TestIndexMarked(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	read := func() []byte {
		data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	shared := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, ".git", name)) }
	if indexMarked(read(), shared) {
		t.Error("an index without marks counts as marked")
	}
	for _, mark := range []string{"--assume-unchanged", "--skip-worktree"} {
		sh(t, dir, "git update-index "+mark+" b.txt")
		if !indexMarked(read(), shared) {
			t.Errorf("%s is not seen", mark)
		}
		sh(t, dir, "git update-index --no"+strings.TrimPrefix(mark, "-")+" b.txt")
	}
	sh(t, dir, "git update-index --split-index && git update-index --skip-worktree b.txt")
	if !indexMarked(read(), shared) {
		t.Error("a mark in a split index is not seen")
	}
	if !indexMarked([]byte("not an index"), shared) {
		t.Error("an index this reader cannot read counts as unmarked")
	}
}
