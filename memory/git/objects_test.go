package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordTwo takes a baseline and a checkpoint of one changed and one new
// file, and returns the second.
func recordTwo(t *testing.T, dir string, cps *Checkpoints) *Checkpoint {
	t.Helper()
	ctx := context.Background()
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "b.txt"), "one\ntwo\nthree\n")
	write(t, filepath.Join(dir, "new", "n.txt"), "n\n")
	cp, err := cps.Record(ctx, "turn-1", "ralph s turn-1")
	if err != nil || cp == nil || len(cp.Files) != 2 {
		t.Fatalf("Record = %+v, %v", cp, err)
	}
	return cp
}

// TestCheckpointObjectsAreGits: the commits and refs ralph writes itself
// are what git would write: the same object names (git hash-object
// agrees), readable by git, a repository git fsck finds clean.
func TestCheckpointObjectsAreGits(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if cps.store == nil || cps.store.common != r.GitDir {
		t.Fatalf("store = %+v, want one in %s", cps.store, r.GitDir)
	}
	cp := recordTwo(t, dir, cps)
	if got := sh(t, dir, "git rev-parse "+cp.Ref); strings.TrimSpace(got) != cp.Commit {
		t.Fatalf("%s = %s, want %s", cp.Ref, got, cp.Commit)
	}
	if got := sh(t, dir, "git cat-file commit "+cp.Commit+" | git hash-object -t commit --stdin"); strings.TrimSpace(got) != cp.Commit {
		t.Fatalf("git names the commit %s, ralph %s", got, cp.Commit)
	}
	if got := sh(t, dir, "git show --format='%P %an <%ae> %s' --name-only "+cp.Commit); got != cp.Parent+" ralph <ralph@localhost> ralph s turn-1\n\nb.txt\nnew/n.txt\n" {
		t.Fatalf("git show:\n%s", got)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
	fi, err := os.Stat(filepath.Join(r.GitDir, "objects", cp.Commit[:2], cp.Commit[2:]))
	if err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("the object: %v, %v (want mode 0444, as git writes)", fi, err)
	}
	if left, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "*", "tmp_obj_*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestCheckpointsInALinkedWorktree: a linked worktree's objects and
// shared refs live in the main repository's directory, where git looks
// for them.
func TestCheckpointsInALinkedWorktree(t *testing.T) {
	t.Parallel()
	main := repo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	sh(t, main, "git worktree add -q -b side "+wt)
	r := open(t, wt)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(wt, ".ralph"), "")
	if cps.store == nil || filepath.Clean(cps.store.common) != filepath.Join(main, ".git") {
		t.Fatalf("store = %+v, want the main repository's", cps.store)
	}
	cp := recordTwo(t, wt, cps)
	if got := sh(t, main, "git rev-parse "+cp.Ref); strings.TrimSpace(got) != cp.Commit {
		t.Fatalf("from the main work tree %s = %s, want %s", cp.Ref, got, cp.Commit)
	}
	if got := sh(t, main, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
}

// TestCheckpointsOfASHA256Repository: a layout ralph does not write
// itself goes to git's processes, and the checkpoints are as good.
func TestCheckpointsOfASHA256Repository(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "git init -q -b main --object-format=sha256 && printf 'one\\ntwo\\n' > b.txt && git add . && git commit -qm first")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if cps.store != nil {
		t.Fatal("a SHA-256 repository's objects were to be written by ralph")
	}
	cp := recordTwo(t, dir, cps)
	if len(cp.Commit) != 64 || strings.TrimSpace(sh(t, dir, "git rev-parse "+cp.Ref)) != cp.Commit {
		t.Fatalf("checkpoint %+v", cp)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
}

func TestPlainLayout(t *testing.T) {
	t.Parallel()
	for config, want := range map[string]bool{
		"[core]\n\trepositoryformatversion = 0\n\tbare = false\n":                        true,
		"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n": false,
		"[extensions]\n\trefStorage = reftable\n":                                        false,
		"[core]\n\tsharedRepository = group\n":                                           false,
		"[core]\n\tfsync = reference\n":                                                  false,
		"[core]\n\tlooseCompression = 9\n":                                               false,
		"[extensions]\n\tworktreeConfig = true\n":                                        false,
	} {
		if got := plainLayout([]byte(config)); got != want {
			t.Errorf("plainLayout(%q) = %v, want %v", config, got, want)
		}
	}
}

// TestRefLockedByGit: a ref git holds locked at that moment is not
// written over; the checkpoint fails, as two gits updating one ref do.
func TestRefLockedByGit(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	s := nativeStore(r.GitDir)
	lock := filepath.Join(r.GitDir, "refs", "ralph", "s", "1.lock")
	write(t, lock, "")
	if err := s.writeRef("refs/ralph/s/1", r.Head); err == nil {
		t.Fatal("wrote a ref that git held locked")
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := s.writeRef("refs/ralph/s/1", r.Head); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, dir, "git rev-parse refs/ralph/s/1"); strings.TrimSpace(got) != r.Head {
		t.Fatalf("ref = %s", got)
	}
	// A name outside what ralph makes is git's to check.
	if err := s.writeRef("refs/ralph/s/x..y", r.Head); err != errNotPlain {
		t.Fatalf("writeRef of an odd name = %v", err)
	}
}

// TestCheckpointsArePackedAsTheyAccumulate: a long session's checkpoint
// objects, which ralph writes loose itself, are packed once git's own
// threshold is passed (gc --auto, asked every packEvery checkpoints), and
// every checkpoint stays reachable from its ref.
func TestCheckpointsArePackedAsTheyAccumulate(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, "git config gc.auto 100")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.packEvery = 10
	packEvery := cps.packEvery
	loose := func() int {
		n := 0
		dirs, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "[0-9a-f][0-9a-f]"))
		for _, d := range dirs {
			files, _ := os.ReadDir(d)
			n += len(files)
		}
		return n
	}
	// Four hundred files a checkpoint, so that git's sample of its loose
	// objects (one directory of 256) surely sees more than its threshold.
	for i := range packEvery {
		for j := range 400 {
			write(t, filepath.Join(dir, "f", fmt.Sprintf("%03d.txt", j)), fmt.Sprintf("turn %d file %d\n", i, j))
		}
		if cp, err := cps.Record(context.Background(), fmt.Sprintf("turn-%d", i), "ralph s"); err != nil || cp == nil {
			t.Fatalf("checkpoint %d: %+v, %v", i, cp, err)
		}
		if i == packEvery-2 && loose() < 3500 {
			t.Fatalf("%d loose objects before the pack; the test needs more to be sure git sees them", loose())
		}
	}
	cps.waitPacked() // the gc runs beside the checkpoints
	if n := loose(); n > 100 {
		t.Fatalf("%d loose objects after %d checkpoints: not packed", n, packEvery)
	}
	if got := strings.Count(sh(t, dir, "git for-each-ref refs/ralph/s/"), "\n"); got != packEvery {
		t.Fatalf("%d checkpoint refs, want %d", got, packEvery)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
}

// TestPackWritesNothingThroughALink: a command swapped .git/objects/pack
// for a link out of the repository; the pack that would have gone
// through it is not made, and nothing lands where the link points.
func TestPackWritesNothingThroughALink(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	outside := t.TempDir()
	sh(t, dir, "git config gc.auto 1 && rmdir .git/objects/pack && ln -s '"+outside+"' .git/objects/pack")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.packEvery = 2
	for i := range 2 * cps.packEvery {
		for j := range 300 {
			write(t, filepath.Join(dir, "f", fmt.Sprintf("%03d.txt", j)), fmt.Sprintf("turn %d file %d\n", i, j))
		}
		if _, err := cps.Record(context.Background(), fmt.Sprintf("turn-%d", i), "ralph s"); err != nil {
			t.Fatal(err)
		}
	}
	cps.waitPacked()
	if got := sh(t, outside, "find . -mindepth 1"); got != "" {
		t.Fatalf("written through the link: %q", got)
	}
}
