package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A checkpoint of 2,000 named paths that cannot be built from the latest
// tree (the first after an adopted baseline, whose tree ralph has not
// read) takes them into ralph's index at what its paths cost, not its
// paths times the index: in an index of 20,000 files, under a quarter of
// what git add with the same paths as pathspecs takes on a copy of the
// same index (a twentieth on an idle machine), for the same tree. The
// ignored new file stays out, a tracked file the ignore rules match is
// taken, and the removed file is recorded as removed.
func TestNamedCheckpointCostsItsPaths(t *testing.T) {
	t.Parallel()
	const files, named = 20000, 2000
	dir := repo(t)
	for i := range files {
		write(t, filepath.Join(dir, "f", fmt.Sprintf("%05d.txt", i)), fmt.Sprintf("original %d\n", i))
	}
	write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	write(t, filepath.Join(dir, "kept.log"), "tracked\n")
	sh(t, dir, "git add . && git add -f kept.log && git commit -qm files")
	r := open(t, dir)
	ctx := context.Background()
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.Adopt(r.Head)
	cps.Seed()

	// Half the paths change, half are new; one new file is ignored, one
	// tracked file is removed, and a tracked file the rules match changes.
	var paths []string
	for i := range named / 2 {
		p := fmt.Sprintf("f/%05d.txt", i*7)
		write(t, filepath.Join(dir, p), "changed\n")
		paths = append(paths, p)
	}
	for i := range named/2 - 3 {
		p := fmt.Sprintf("n/new-%05d.txt", i)
		write(t, filepath.Join(dir, p), "new\n")
		paths = append(paths, p)
	}
	write(t, filepath.Join(dir, "n", "ignored.log"), "ignored\n")
	write(t, filepath.Join(dir, "kept.log"), "tracked, changed\n")
	if err := os.Remove(filepath.Join(dir, "f", "00001.txt")); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, "n/ignored.log", "kept.log", "f/00001.txt")
	if len(paths) != named {
		t.Fatalf("%d paths", len(paths))
	}

	// git add's way and update-index's, each on a copy of ralph's index
	// (add without the ignored file, which it refuses, failing whole).
	want := slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return p == "n/ignored.log" })
	slices.Sort(want)
	data, err := os.ReadFile(cps.Index())
	if err != nil {
		t.Fatal(err)
	}
	// Each way is timed three times on fresh copies and its best taken:
	// a single timing beside the whole suite on two cores once put a
	// scheduling stall on the quick side (473 ms against 1.3 s).
	var byAdd, byName string
	var add, took time.Duration
	for range 3 {
		byAdd, byName = filepath.Join(t.TempDir(), "index"), filepath.Join(t.TempDir(), "index")
		write(t, byAdd, string(data))
		write(t, byName, string(data))
		start := time.Now()
		if err := cps.add(ctx, []string{"GIT_INDEX_FILE=" + byAdd}, want, 0, nil); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); add == 0 || d < add {
			add = d
		}
		start = time.Now()
		if err := cps.addNamed(ctx, []string{"GIT_INDEX_FILE=" + byName}, paths, 0, nil); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); took == 0 || d < took {
			took = d
		}
	}
	t.Logf("%d named paths taken into an index of %d files: %s; by git add: %s", named, files, took.Round(time.Millisecond), add.Round(time.Millisecond))
	// Twice is the bound: the way by name costs a third of git add's on
	// an idle machine, a regression to pathspecs costs what git add does,
	// and beside the whole suite at load 11 the best of three was 3.2x
	// apart, which a bound of 4 failed.
	if 2*took > add {
		t.Errorf("the named paths took %s, git add of them %s: the cost still grows with the index", took, add)
	}
	var trees []string
	for _, index := range []string{byAdd, byName} {
		tree, err := r.Git(ctx, []string{"GIT_INDEX_FILE=" + index}, "write-tree")
		if err != nil {
			t.Fatal(err)
		}
		trees = append(trees, string(tree))
	}
	if trees[0] != trees[1] {
		t.Fatal("update-index took another tree than git add from the same paths")
	}

	// The checkpoint goes that way, and records the same tree.
	cp, err := cps.Record(ctx, "1", "turn", paths...)
	if err != nil || cp == nil {
		t.Fatalf("%+v, %v", cp, err)
	}
	if treeOf(t, r, cp.Commit)+"\n" != trees[0] {
		t.Fatal("the checkpoint's tree is not the one git add makes of the same paths")
	}
	var got []string
	for _, f := range cp.Files {
		got = append(got, f.Path)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the checkpoint changed %d files, want %d (the ignored file left out)", len(got), len(want))
	}
	if out, err := r.Git(ctx, nil, "ls-tree", "-r", "--name-only", cp.Commit, "--", "f/00001.txt", "n/ignored.log", "kept.log"); err != nil || string(out) != "kept.log\n" {
		t.Fatalf("the checkpoint holds %q (%v), want kept.log alone", out, err)
	}
}
