package git

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// quickUndo restores paths of the turn to base the quick way, counts
// given (the turn's, to be reversed) or not, and records the undo's
// checkpoint.
func quickUndo(t *testing.T, cps *Checkpoints, base, turn *Checkpoint, paths []string, given bool, between func()) *Checkpoint {
	t.Helper()
	ctx := context.Background()
	rs := Restoration{Commit: base.Commit, Paths: paths}
	if given {
		rs.Undone = map[string]FileChange{}
		for _, f := range turn.Files {
			rs.Undone[f.Path] = f
		}
	}
	var wrote []string
	if err := cps.Restore(ctx, turn.Commit, []Restoration{rs}, func(r Restoration) { wrote = append(wrote, r.Paths...) }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wrote, paths) {
		t.Fatalf("wrote %q, want %q", wrote, paths)
	}
	if cps.expect == nil || cps.expect.restored == nil {
		t.Fatal("the restore did not go the quick way")
	}
	if between != nil {
		between()
	}
	cp, err := cps.Record(ctx, "2", "undo")
	if err != nil || cp == nil {
		t.Fatalf("the undo's checkpoint: %+v, %v", cp, err)
	}
	return cp
}

// treeOf is a commit's tree.
func treeOf(t *testing.T, r *Repo, commit string) string {
	t.Helper()
	out, err := r.Git(context.Background(), nil, "rev-parse", commit+"^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// An undo's quick restore puts back what the long way puts back (a file
// changed, one removed, one added, a mode), and its checkpoint holds the
// tree and the counts git's own diff gives, whether the counts of the
// change taken back were given or git counted them; ralph's index, once
// it takes the checkpoint's entries, holds the files as they are, so a
// status against it finds nothing.
func TestQuickRestoreIsTheLongWay(t *testing.T) {
	t.Parallel()
	for _, given := range []bool{false, true} {
		dir, r, cps, base, turn, paths := expectRepo(t)
		cp := quickUndo(t, cps, base, turn, paths, given, nil)
		want := numstatOf(t, r, turn.Commit, base.Commit)
		if len(want) != 4 || !reflect.DeepEqual(cp.Files, want) {
			t.Fatalf("given %v: the undo's checkpoint counts %+v; git: %+v", given, cp.Files, want)
		}
		if treeOf(t, r, cp.Commit) != treeOf(t, r, base.Commit) || cp.Parent != turn.Commit {
			t.Fatalf("given %v: the checkpoint holds another tree than base's, or follows another", given)
		}
		if got := sh(t, dir, "cat d/four.txt gone.txt; test -x run.sh && echo exec; ls d"); got != "1\n2\n3\n4\nx\nfour.txt\n" {
			t.Fatalf("given %v: after the undo: %q", given, got)
		}
		if len(cps.behind) == 0 {
			t.Fatalf("given %v: the undo's checkpoint went through ralph's index, not the restore's entries", given)
		}
		// ralph's index takes the checkpoint's entries when something
		// next reads it (behind.go), as the next checkpoint does.
		env := []string{"GIT_INDEX_FILE=" + cps.index}
		cps.mu.Lock()
		err := cps.catchUp(context.Background(), env)
		cps.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if out, err := r.Git(context.Background(), env, "status", "--porcelain", "-uall", "--", ":!.ralph"); err != nil || len(out) > 0 {
			t.Fatalf("given %v: ralph's index against the work tree: %q, %v", given, out, err)
		}
	}
}

// The counts a restore brought are taken only for what the tree holds as
// the restore wrote it: a file changed between the writes and the
// checkpoint (the person's edit) is counted by git.
func TestQuickRestoreCountsWhatTheTreeHolds(t *testing.T) {
	t.Parallel()
	dir, r, cps, base, turn, paths := expectRepo(t)
	cp := quickUndo(t, cps, base, turn, paths, true, func() { sh(t, dir, "printf 'mine\\n' >> gone.txt") })
	want := numstatOf(t, r, turn.Commit, cp.Commit)
	if !reflect.DeepEqual(cp.Files, want) {
		t.Fatalf("the undo's checkpoint counts %+v; git: %+v", cp.Files, want)
	}
	for _, f := range cp.Files {
		if f.Path == "gone.txt" && f.Added != 2 {
			t.Fatalf("gone.txt: %+v", f)
		}
	}
}

// A quick restore removes the directories the files it removed leave
// empty, and writes nothing through a directory a command swapped for a
// link: the link is replaced by the directory, what it named is left.
func TestQuickRestoreFollowsNoLink(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, "mkdir d && printf 'mine\\n' > d/x.txt && git add . && git commit -qm d")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "mkdir -p n/e/w && printf 'n\\n' > n/e/w/a.txt && printf 'n\\n' > n/b.txt && printf 'model\\n' > d/x.txt")
	turn, err := cps.Record(ctx, "1", "turn")
	if err != nil || turn == nil {
		t.Fatalf("%+v, %v", turn, err)
	}
	outside := t.TempDir()
	write(t, filepath.Join(outside, "x.txt"), "outside\n")
	sh(t, dir, "rm -r d && ln -s '"+outside+"' d")
	// The link is a change of its own, which the checkpoint before the
	// undo takes.
	now, err := cps.Record(ctx, "1b", "before-undo")
	if err != nil || now == nil {
		t.Fatalf("%+v, %v", now, err)
	}
	var wrote []string
	rs := []Restoration{{Commit: base.Commit, Paths: []string{"d/x.txt", "n/b.txt", "n/e/w/a.txt"}}}
	if err := cps.Restore(ctx, now.Commit, rs, func(r Restoration) { wrote = append(wrote, r.Paths...) }); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(outside, "x.txt")); err != nil || string(got) != "outside\n" {
		t.Fatalf("the link's target: %q, %v", got, err)
	}
	if got := sh(t, dir, "cat d/x.txt; ls -a n 2>&1 || true"); got != "mine\nls: cannot access 'n': No such file or directory\n" {
		t.Fatalf("after the undo: %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "d")); err != nil || !fi.IsDir() {
		t.Fatalf("d is not a directory again: %v", err)
	}
	cp, err := cps.Record(ctx, "2", "undo")
	if err != nil || cp == nil || treeOf(t, r, cp.Commit) != treeOf(t, r, base.Commit) {
		t.Fatalf("the undo's checkpoint is not the baseline's tree: %+v, %v", cp, err)
	}
}

// A quick restore reads each blob once and checks it as its file is
// written, so one object changed since its checkpoint, the last of 300
// read, must still leave every file as the undo found it and no
// temporary file behind: the files wait at their temporary names until
// every blob has passed. An empty object planted under a file's name is
// caught as well, though no byte of it is read.
func TestQuickRestoreWritesNothingWhenOneObjectFails(t *testing.T) {
	t.Parallel()
	for _, planted := range []string{"blob 9\x00backdoor\n", "blob 0\x00"} {
		dir := repo(t)
		sh(t, dir, `mkdir f && for i in $(seq -w 1 300); do echo "original $i" > f/$i.txt; done && git add . && git commit -qm files`)
		r := open(t, dir)
		cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
		ctx := context.Background()
		base, err := cps.Record(ctx, "0", "baseline")
		if err != nil {
			t.Fatal(err)
		}
		sh(t, dir, `for f in f/*.txt; do echo more >> $f; done`)
		turn, err := cps.Record(ctx, "1", "turn")
		if err != nil || turn == nil {
			t.Fatalf("%+v, %v", turn, err)
		}
		plant(t, dir, strings.TrimSpace(sh(t, dir, "git rev-parse HEAD:f/300.txt")), planted)
		var paths []string
		for i := 1; i <= 300; i++ {
			paths = append(paths, fmt.Sprintf("f/%03d.txt", i))
		}
		err = cps.Restore(ctx, turn.Commit, []Restoration{{Commit: base.Commit, Paths: paths}}, func(Restoration) {})
		if !errors.Is(err, ErrObjectChanged) || !strings.Contains(err.Error(), "f/300.txt") || !strings.Contains(err.Error(), "nothing was restored") {
			t.Fatalf("planted %q: Restore = %v, want ErrObjectChanged naming f/300.txt", planted, err)
		}
		if got := sh(t, dir, `grep -L more f/*.txt; ls -a f | grep -c ralph-restore || true`); got != "0\n" {
			t.Fatalf("planted %q: files the failed restore wrote, then temporary files left:\n%s", planted, got)
		}
	}
}

// cat-file's batch gives a converted blob's stored size in its header,
// so a file git converts to another size (here under attributes a
// checkpoint did not see) cannot be written from it: the surplus is
// found, not left to cut the file short and misread the next, and git
// restore writes the file converted.
func TestABlobConvertedToAnotherSizeIsWrittenByGit(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, `printf 'one\ntwo\n' > c.txt && printf 'x\n' > d.txt && git add . && git commit -qm c && printf 'c.txt eol=crlf\n' > .git/info/attributes && rm c.txt d.txt`)
	r := open(t, dir)
	ctx := context.Background()
	paths := []string{"c.txt", "d.txt"}
	tree, err := r.listTree(ctx, "HEAD", map[string]bool{"c.txt": true, "d.txt": true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := openBeneath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = r.catBlobs(ctx, tree, paths, true, func(p string, n int64, br *bufio.Reader) error {
		_, err := br.Discard(int(n))
		return err
	})
	if !errors.Is(err, errConvertedSize) || !strings.Contains(err.Error(), "c.txt") {
		t.Fatalf("the batch: %v, want errConvertedSize for c.txt", err)
	}
	if err := r.writeBlobs(ctx, b, "HEAD", tree, paths, true); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, dir, "od -An -c c.txt | tr -s ' '; cat d.txt; ls -a | grep -c ralph-restore || true"); got != " o n e \\r \\n t w o \\r \\n\nx\n0\n" {
		t.Fatalf("c.txt, d.txt, then the temporary files left:\n%q", got)
	}
}
