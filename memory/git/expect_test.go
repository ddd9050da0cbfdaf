package git

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// expectRepo is a repository with a baseline checkpoint and a turn that
// changed, removed, added and made executable files; paths are those the
// turn changed.
func expectRepo(t *testing.T) (dir string, r *Repo, cps *Checkpoints, base, turn *Checkpoint, paths []string) {
	t.Helper()
	dir = repo(t)
	sh(t, dir, "mkdir d && printf '1\\n2\\n3\\n4\\n' > d/four.txt && printf 'x\\n' > gone.txt && printf 'run\\n' > run.sh && git add . && git commit -qm more")
	r = open(t, dir)
	cps = NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "printf '1\\nTWO\\n3\\n4\\n5\\n' > d/four.txt && rm gone.txt && printf 'new\\nfile\\n' > d/new.txt && chmod +x run.sh")
	if turn, err = cps.Record(ctx, "1", "turn"); err != nil || turn == nil {
		t.Fatalf("%+v, %v", turn, err)
	}
	for _, f := range turn.Files {
		paths = append(paths, f.Path)
	}
	return dir, r, cps, base, turn, paths
}

// numstatOf is git's own count of the lines between two commits.
func numstatOf(t *testing.T, r *Repo, from, to string) []FileChange {
	t.Helper()
	out, err := r.Git(context.Background(), nil, "diff", "--numstat", "-z", "--no-renames", from, to)
	if err != nil {
		t.Fatal(err)
	}
	return parseNumstat(out)
}

// An undo's checkpoint records the same files, with the same counts,
// whether git counted them beside the writes (Expect) or after them; and
// the tree git expected is the tree the checkpoint took.
func TestExpectedCheckpointIsTheCheckpoint(t *testing.T) {
	defer func(n int) { expectFrom = n }(expectFrom)
	expectFrom = 0
	_, r, cps, base, turn, paths := expectRepo(t)
	ctx := context.Background()
	rs := []Restoration{{Commit: base.Commit, Paths: paths}}
	tree, numstat, err := cps.predict(ctx, turn.Commit, rs)
	if err != nil {
		t.Fatal(err)
	}
	cps.Expect(ctx, turn.Commit, rs)
	if err := r.Restore(ctx, base.Commit, paths); err != nil {
		t.Fatal(err)
	}
	cp, err := cps.Record(ctx, "2", "undo")
	if err != nil || cp == nil {
		t.Fatalf("%+v, %v", cp, err)
	}
	want := numstatOf(t, r, turn.Commit, base.Commit)
	if len(want) != 4 || !reflect.DeepEqual(cp.Files, want) || !reflect.DeepEqual(parseNumstat(numstat), want) {
		t.Fatalf("the undo's checkpoint: %+v\nexpected: %+v\ngit: %+v", cp.Files, parseNumstat(numstat), want)
	}
	if got, err := r.Git(ctx, nil, "rev-parse", cp.Commit+"^{tree}"); err != nil || string(got) != tree+"\n" {
		t.Fatalf("the checkpoint's tree is %s, expected %s (%v)", got, tree, err)
	}
	if cps.expect != nil {
		t.Fatal("the expectation outlived the checkpoint it was for")
	}
}

// The checkpoint takes an expected count only for the tree it expected:
// a file the restore did not write as planned (the person's, changed
// meanwhile) has the checkpoint count the lines itself.
func TestExpectedCountIsTakenOnlyForItsTree(t *testing.T) {
	t.Parallel()
	dir, r, cps, base, turn, paths := expectRepo(t)
	ctx := context.Background()
	if err := r.Restore(ctx, base.Commit, paths); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "printf 'mine\\n' >> d/four.txt")
	tree, _, err := cps.predict(ctx, turn.Commit, []Restoration{{Commit: base.Commit, Paths: paths}})
	if err != nil {
		t.Fatal(err)
	}
	// A count that is not git's shows which one the checkpoint took.
	fake := func(tree string) *expected {
		e := &expected{from: turn.Commit, done: make(chan struct{}), tree: tree, numstat: []byte("7\t7\tfake.txt\x00")}
		close(e.done)
		return e
	}
	cps.expect = fake(tree)
	cp, err := cps.Record(ctx, "2", "undo")
	if err != nil || cp == nil {
		t.Fatalf("%+v, %v", cp, err)
	}
	want := numstatOf(t, r, turn.Commit, cp.Commit)
	if !reflect.DeepEqual(cp.Files, want) || len(want) != 4 {
		t.Fatalf("the checkpoint of another tree took the expected count: %+v (git: %+v)", cp.Files, want)
	}

	// The same tree: the count is taken as expected.
	sh(t, dir, "printf 'mine again\\n' >> d/four.txt")
	// The tree that checkpoint will take, built on an index of the
	// test's own.
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	if out, err := r.Git(ctx, env, "read-tree", cp.Commit); err != nil {
		t.Fatalf("%s %v", out, err)
	}
	if out, err := r.Git(ctx, env, "add", "d/four.txt"); err != nil {
		t.Fatalf("%s %v", out, err)
	}
	tree2, err := r.Git(ctx, env, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	cps.expect = fake(string(tree2[:len(tree2)-1]))
	cps.expect.from = cp.Commit
	if cp, err = cps.Record(ctx, "3", "again"); err != nil || cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "fake.txt" {
		t.Fatalf("the checkpoint of the expected tree: %+v, %v", cp, err)
	}
}

// The scratch index of an expectation is ralph's own file: a link a
// command put at its name is removed, never written through.
func TestExpectFollowsNoLinkAtItsIndex(t *testing.T) {
	t.Parallel()
	_, _, cps, base, turn, paths := expectRepo(t)
	outside := filepath.Join(t.TempDir(), "victim")
	write(t, outside, "the person's\n")
	if err := os.Symlink(outside, cps.index+".expect"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cps.predict(context.Background(), turn.Commit, []Restoration{{Commit: base.Commit, Paths: paths}}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "the person's\n" {
		t.Fatalf("the link's target: %q, %v", data, err)
	}
	if _, err := os.Lstat(cps.index + ".expect"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the scratch index is left: %v", err)
	}
}
