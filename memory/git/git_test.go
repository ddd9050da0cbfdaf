package git

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/git/gittest"
)

var gitEnv = gittest.Env

// repo is a fresh repository with one commit of README.md and b.txt.
func repo(t testing.TB) string { return gittest.Repo(t) }

func sh(t testing.TB, dir, script string) string {
	t.Helper()
	return gittest.Sh(t, dir, script)
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func open(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOpenOutsideARepository(t *testing.T) {
	t.Parallel()
	if _, err := Open(context.Background(), t.TempDir()); !errors.Is(err, ErrNoRepo) {
		t.Fatalf("Open = %v, want ErrNoRepo", err)
	}
}

// TestOpenStartsNoGitThatCanOnlyFail: outside any work tree Open answers
// without starting git, which cost milliseconds on the way to the first
// request; inside a plain one it reads the repository's files (see
// TestDiscoverAgreesWithGit); with GIT_DIR set, git decides.
func TestOpenStartsNoGitThatCanOnlyFail(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	write(t, filepath.Join(bin, "git"), "#!/bin/sh\necho \"$@\" >> "+calls+"\nexec "+real+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if mayBeInWorkTree(outside) {
		t.Skip("the temporary directory is inside a git work tree")
	}
	inside := filepath.Join(repo(t), "sub")
	write(t, filepath.Join(inside, "f.txt"), "x\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	started := func() int {
		data, _ := os.ReadFile(calls)
		_ = os.Remove(calls)
		return strings.Count(string(data), "\n")
	}
	if _, err := Open(context.Background(), outside); !errors.Is(err, ErrNoRepo) || started() != 0 {
		t.Fatalf("outside a work tree: %v, or git was started", err)
	}
	if _, _, err := Context(context.Background(), outside, ".ralph"); !errors.Is(err, ErrNoRepo) || started() != 0 {
		t.Fatalf("the context outside a work tree: %v, or git was started", err)
	}
	if r, err := Open(context.Background(), inside); err != nil || r.Prefix != "sub/" || started() != 0 {
		t.Fatalf("inside a work tree: %+v %v", r, err)
	}
	t.Setenv("GIT_DIR", filepath.Join(filepath.Dir(inside), ".git"))
	t.Setenv("GIT_WORK_TREE", filepath.Dir(inside))
	if _, err := Open(context.Background(), outside); started() == 0 {
		t.Fatalf("with GIT_DIR set, git was not asked (%v)", err)
	}
}

func TestContextCarriesBranchStatusAndSubjects(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, "printf 'x\\n' >> b.txt && printf 'new\\n' > c.txt && git commit -qam 'second: edit b'")
	sh(t, dir, "printf 'y\\n' >> README.md")
	got, clean, err := Context(context.Background(), dir)
	if err != nil || clean {
		t.Fatal(err, clean)
	}
	for _, want := range []string{"Branch: main", " M README.md", "?? c.txt", "- second: edit b", "- first commit"} {
		if !strings.Contains(got, want) {
			t.Errorf("context lacks %q:\n%s", want, got)
		}
	}
	// A repository without commits has a context too.
	empty, _ := filepath.EvalSymlinks(t.TempDir())
	sh(t, empty, "git init -q -b trunk && touch a")
	got, _, err = Context(context.Background(), empty)
	if err != nil || !strings.Contains(got, "trunk") || !strings.Contains(got, "?? a") {
		t.Fatalf("empty repository: %q, %v", got, err)
	}
}

func TestContextOfACleanTreeLeavesOutRalphsState(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, ".ralph", "session.json"), "{}")
	r := open(t, dir)
	got, clean, err := Context(context.Background(), dir, ".ralph")
	if err != nil || !clean || strings.Contains(got, ".ralph") || !strings.Contains(got, "Work tree: clean") {
		t.Fatalf("clean tree: %q %v %v", got, clean, err)
	}
	if r.Head == "" || len(r.Head) != 40 {
		t.Fatalf("Head = %q", r.Head)
	}
}

// A project in a subdirectory of the work tree sees the whole tree, with
// paths from its top, and its own state directory left out.
func TestContextFromASubdirectoryCoversTheWholeTree(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sub := filepath.Join(dir, "sub")
	write(t, filepath.Join(sub, "kept.txt"), "kept")
	sh(t, dir, "git add sub && git commit -qm sub")
	write(t, filepath.Join(sub, ".ralph", "session.json"), "{}")
	write(t, filepath.Join(sub, "new.txt"), "new")
	write(t, filepath.Join(dir, ".ralph", "top.txt"), "not ralph's: the project is sub")
	sh(t, dir, "printf 'y\\n' >> README.md")
	got, clean, err := Context(context.Background(), sub, ".ralph")
	if err != nil || clean {
		t.Fatal(err, clean)
	}
	for _, want := range []string{" M README.md", "?? sub/new.txt", "?? .ralph/"} {
		if !strings.Contains(got, want) {
			t.Errorf("context lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "sub/.ralph") {
		t.Errorf("context has the project's state directory:\n%s", got)
	}
}

func TestContextBoundsTheStatus(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	for i := range 80 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), "x")
	}
	got, _, err := Context(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, "?? f"); n != statusLines || !strings.Contains(got, "… and 30 more") {
		t.Fatalf("%d status lines:\n%s", n, got)
	}
}

// personState is everything of the person's that checkpoints must leave
// alone.
func personState(t *testing.T, dir string) string {
	// The index file byte for byte: checkpoints must not even refresh it.
	return sh(t, dir, "sha256sum .git/index; git rev-parse HEAD; git symbolic-ref HEAD; git stash list; git for-each-ref refs/heads refs/tags")
}

func TestCheckpointsTakeTheWorkTreeAndNothingOfThePersons(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, ".gitignore"), "ignored.log\n")
	write(t, filepath.Join(dir, "ignored.log"), "noise")
	write(t, filepath.Join(dir, "staged.txt"), "staged\n")
	sh(t, dir, "printf 'stash me\\n' >> b.txt && git stash -q && git add staged.txt && printf 'dirty\\n' >> README.md && printf 'after stash\\n' > c.txt")
	write(t, filepath.Join(dir, ".ralph", "session.json"), "{}")
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	before := personState(t, dir)
	r := open(t, dir)
	cps := NewCheckpoints(r, "s1", filepath.Join(dir, ".ralph", "sessions", "s1", "git-index"), filepath.Join(dir, ".ralph"), "")
	cps.SetMaxFile(1 << 20)
	ctx := context.Background()

	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	if base.Ref != "refs/ralph/s1/0" || len(base.Skipped) != 1 || base.Skipped[0] != "big.bin" {
		t.Fatalf("baseline %+v", base)
	}
	tree := sh(t, dir, "git ls-tree -r --name-only "+base.Commit)
	for _, want := range []string{".gitignore", "README.md", "b.txt", "c.txt", "staged.txt"} {
		if !slices.Contains(strings.Fields(tree), want) {
			t.Errorf("baseline lacks %s:\n%s", want, tree)
		}
	}
	for _, not := range []string{"ignored.log", ".ralph/session.json", "big.bin"} {
		if strings.Contains(tree, not) {
			t.Errorf("baseline has %s", not)
		}
	}
	if got := sh(t, dir, "git show "+base.Commit+":README.md"); got != "readme\ndirty\n" {
		t.Errorf("README.md in the baseline = %q, want the work tree's", got)
	}

	// Nothing changed: no checkpoint.
	if cp, err := cps.Record(ctx, "1", "turn 1"); err != nil || cp != nil {
		t.Fatalf("unchanged tree: %+v, %v", cp, err)
	}
	// A turn writes a.txt and edits b.txt.
	write(t, filepath.Join(dir, "a.txt"), "a1\na2\n")
	write(t, filepath.Join(dir, "b.txt"), "one\nTWO\nthree\n")
	write(t, filepath.Join(dir, ".ralph", "session.json"), `{"changed":true}`)
	cp, err := cps.Record(ctx, "2", "turn 2")
	if err != nil || cp == nil {
		t.Fatalf("turn 2: %+v, %v", cp, err)
	}
	want := []FileChange{{Path: "a.txt", Added: 2}, {Path: "b.txt", Added: 2, Deleted: 1}}
	if !slices.Equal(cp.Files, want) || cp.Parent != base.Commit {
		t.Fatalf("turn 2 files %+v parent %s, want %+v parent %s", cp.Files, cp.Parent, want, base.Commit)
	}
	if after := personState(t, dir); after != before {
		t.Fatalf("the person's state changed:\n%s\nwas\n%s", after, before)
	}
}

// Changes made within moments of the previous checkpoint, as a fast turn
// makes them, are all seen: a file rewritten at the same size in the
// same second as ralph's index was written (racy git), a new file in a
// directory whose listing the untracked cache holds, a removed file.
func TestCheckpointsSeeChangesMadeRightAfterTheLast(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, "d", "keep.txt"), "k\n")
	sh(t, dir, "git add d && git commit -qm d")
	r := open(t, dir)
	cps := NewCheckpoints(r, "racy", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		content := fmt.Sprintf("one\n%03d\n", i) // as long as "one\ntwo\n"
		write(t, filepath.Join(dir, "b.txt"), content)
		write(t, filepath.Join(dir, "d", fmt.Sprintf("n%d.txt", i)), "n\n")
		want := map[FileChange]bool{
			{Path: "b.txt", Added: 1, Deleted: 1}:         true,
			{Path: fmt.Sprintf("d/n%d.txt", i), Added: 1}: true,
		}
		if i > 1 {
			if err := os.Remove(filepath.Join(dir, "d", fmt.Sprintf("n%d.txt", i-1))); err != nil {
				t.Fatal(err)
			}
			want[FileChange{Path: fmt.Sprintf("d/n%d.txt", i-1), Deleted: 1}] = true
		}
		cp, err := cps.Record(ctx, fmt.Sprint(i), "turn")
		if err != nil || cp == nil {
			t.Fatalf("turn %d: %+v, %v", i, cp, err)
		}
		got := map[FileChange]bool{}
		for _, f := range cp.Files {
			got[f] = true
		}
		if !maps.Equal(got, want) {
			t.Fatalf("turn %d changed %+v, want %v", i, cp.Files, want)
		}
		if got := sh(t, dir, "git show "+cp.Commit+":b.txt"); got != content {
			t.Fatalf("turn %d: b.txt = %q, want %q", i, got, content)
		}
	}
}

// Every kind of change a command may make is taken as git add takes it:
// a file that became a directory, a removed file, a symbolic link, a
// nested repository (a gitlink).
func TestCheckpointsTakeEveryKindOfChange(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	cps := NewCheckpoints(r, "kinds", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "rm b.txt && mkdir b.txt && printf 'in\\n' > b.txt/inner.txt && rm README.md && ln -s b.txt/inner.txt link && "+
		"mkdir nested && cd nested && git init -q && printf 'x\\n' > x && git add x && git commit -qm x")
	cp, err := cps.Record(ctx, "1", "turn")
	if err != nil || cp == nil {
		t.Fatalf("%+v, %v", cp, err)
	}
	got := sh(t, dir, "git ls-tree -r "+cp.Commit+" | awk '{print $1, $2, $4}'")
	want := "100644 blob b.txt/inner.txt\n120000 blob link\n160000 commit nested\n"
	if got != want {
		t.Fatalf("tree:\n%s\nwant\n%s", got, want)
	}
}

func TestRestorePutsFilesBackAndRemovesNewOnes(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	index := filepath.Join(t.TempDir(), "index")
	cps := NewCheckpoints(r, "s2", index, filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "mkdir -p new/dir && printf 'n\\n' > new/dir/n.txt && printf 'changed\\n' > b.txt && chmod +x README.md && printf 'mine\\n' > mine.txt && git add mine.txt")
	before := sh(t, dir, "git ls-files -s; git stash list")
	turn, err := cps.Record(ctx, "1", "turn 1")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range turn.Files {
		paths = append(paths, f.Path)
	}
	if changed, err := r.Changed(ctx, turn.Commit, "HEAD", paths); err != nil || len(changed) == 0 {
		t.Fatalf("Changed = %v, %v", changed, err)
	}
	if err := r.Restore(ctx, base.Commit, []string{"b.txt", "new/dir/n.txt", "README.md"}); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, dir, "cat b.txt; test -x README.md && echo exec; ls new 2>&1 || true"); got != "one\ntwo\nls: cannot access 'new': No such file or directory\n" {
		t.Fatalf("after restore: %q", got)
	}
	if got := sh(t, dir, "git ls-files -s; git stash list"); got != before {
		t.Fatalf("restore touched the index:\n%s\nwas\n%s", got, before)
	}
	if got := sh(t, dir, "cat mine.txt"); got != "mine\n" {
		t.Fatal("a file outside the restore changed")
	}
}

func TestPruneDeletesTheSessionsRefs(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	ctx := context.Background()
	for _, s := range []string{"keep", "drop"} {
		cps := NewCheckpoints(r, s, filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
		if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, s+".txt"), s)
		if _, err := cps.Record(ctx, "1", "turn"); err != nil {
			t.Fatal(err)
		}
		// Each checkpoint's ref is written with it.
		if got := sh(t, dir, "git for-each-ref --format='%(refname)' refs/ralph/"+s); got != "refs/ralph/"+s+"/0\nrefs/ralph/"+s+"/1\n" {
			t.Fatalf("refs of %s: %q", s, got)
		}
	}
	if err := r.Prune(ctx, "drop", filepath.Join(t.TempDir(), "index")); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, dir, "git for-each-ref --format='%(refname)' refs/ralph"); got != "refs/ralph/keep/0\nrefs/ralph/keep/1\n" {
		t.Fatalf("refs after prune:\n%s", got)
	}
}

// A tracked file over the size limit is left out of a checkpoint by
// name, and the rest of the change is still recorded.
func TestCheckpointSkipsABigTrackedFileByName(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, "big.bin"), strings.Repeat("x", 3<<20))
	sh(t, dir, "git add big.bin && git commit -qm big")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s1", filepath.Join(dir, ".ralph", "sessions", "s1", "git-index"), filepath.Join(dir, ".ralph"), "")
	cps.SetMaxFile(1 << 20)
	ctx := context.Background()
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "big.bin"), strings.Repeat("y", 3<<20))
	write(t, filepath.Join(dir, "b.txt"), "small change\n")
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	cp, err := cps.Record(ctx, "1", "turn 1")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range cp.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"b.txt", "new.txt"}) || !slices.Equal(cp.Skipped, []string{"big.bin"}) {
		t.Fatalf("files %v, skipped %v", paths, cp.Skipped)
	}
}
