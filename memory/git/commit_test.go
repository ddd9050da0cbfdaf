package git

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommitPathsCommitsOnlyThoseAndKeepsThePersonsIndex(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	// The person's work: a staged new file, an unstaged edit, and a staged
	// edit of a file the task changes too.
	sh(t, dir, `printf 'more\n' >> README.md &&
		mkdir -p .git/hooks && printf '#!/bin/sh\necho ran > "$(git rev-parse --show-toplevel)/hook.ran"\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit &&
		printf 'staged by me\n' > c.txt && git add c.txt && git commit -qm c && printf 'person staged\n' >> c.txt && git add c.txt &&
		printf 'mine\n' > s.txt && git add s.txt`)
	write(t, filepath.Join(dir, "b.txt"), "one\nTWO\n")
	write(t, filepath.Join(dir, "n.txt"), "new\n")
	write(t, filepath.Join(dir, "c.txt"), "staged by me\nperson staged\ntask\n")
	write(t, filepath.Join(dir, "gone.txt"), "") // created and removed by the task
	r := open(t, dir)
	r.Hooks = &fakeHooks{t: t, run: true}
	ctx := context.Background()
	msg := "Task title\n\n# a heading the summary had\n\nRalph-Session: s1\n"
	commit, err := r.CommitPaths(ctx, []string{"b.txt", "n.txt", "c.txt", "vanished.txt"}, msg)
	if err != nil || commit == "" {
		t.Fatalf("CommitPaths = %q, %v", commit, err)
	}
	if got := sh(t, dir, "git show --name-only --format= HEAD"); got != "b.txt\nc.txt\nn.txt\n" {
		t.Fatalf("the commit holds\n%s", got)
	}
	if got := sh(t, dir, "git log -1 --format=%B"); got != msg+"\n" {
		t.Fatalf("message = %q", got)
	}
	if got := sh(t, dir, "cat hook.ran"); got != "ran\n" {
		t.Fatal("the pre-commit hook did not run")
	}
	// s.txt is still staged and not committed, README.md still modified
	// and unstaged; c.txt keeps the person's staged version in the index.
	status := sh(t, dir, "git status --porcelain --untracked-files=no")
	if status != " M README.md\nMM c.txt\nA  s.txt\n" {
		t.Fatalf("status after the commit:\n%s", status)
	}
	if got := sh(t, dir, "git show :c.txt"); got != "staged by me\nperson staged\n" {
		t.Fatalf("the person's staged c.txt = %q", got)
	}
	// Nothing new: no commit.
	again, err := r.CommitPaths(ctx, []string{"b.txt"}, "again")
	if err != nil || again != "" {
		t.Fatalf("second CommitPaths = %q, %v", again, err)
	}
	// A hook that refuses: no commit, its words in the error.
	sh(t, dir, `printf '#!/bin/sh\necho "lint: b.txt is ugly" >&2\nexit 1\n' > .git/hooks/pre-commit`)
	write(t, filepath.Join(dir, "b.txt"), "one\nthree\n")
	_, err = r.CommitPaths(ctx, []string{"b.txt"}, "refused")
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "lint: b.txt is ugly") {
		t.Fatalf("refused commit: %v", err)
	}
	if r.HeadNow(ctx) != commit {
		t.Fatal("a refused commit moved HEAD")
	}
}

func TestCommitPathsRefusesADetachedHead(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, "git checkout -q --detach")
	write(t, filepath.Join(dir, "b.txt"), "x\n")
	r := open(t, dir)
	if _, err := r.Branch(context.Background()); !errors.Is(err, ErrDetached) {
		t.Fatalf("Branch = %v", err)
	}
	if _, err := r.CommitPaths(context.Background(), []string{"b.txt"}, "m"); !errors.Is(err, ErrDetached) {
		t.Fatalf("CommitPaths = %v", err)
	}
}

func TestMergeBranch(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	if err := r.AddWorktree(ctx, wt, "ralph/t1", "HEAD"); err != nil {
		t.Fatal(err)
	}
	w := open(t, wt)
	write(t, filepath.Join(wt, "x.txt"), "x\n")
	if c, err := w.CommitWork(ctx, "x", WorkCommit{}); err != nil || c == "" {
		t.Fatalf("CommitWork = %q, %v", c, err)
	}
	// The person's unrelated change stays.
	write(t, filepath.Join(dir, "README.md"), "readme\nmine\n")
	res, err := r.MergeBranch(ctx, "ralph/t1", "merge t1")
	if err != nil || !res.FastForward || len(res.Files) != 1 || res.Files[0] != "x.txt" {
		t.Fatalf("fast-forward = %+v, %v", res, err)
	}
	if got := sh(t, dir, "git status --porcelain"); got != " M README.md\n" {
		t.Fatalf("status after the fast-forward:\n%s", got)
	}
	// Diverged: a merge commit.
	sh(t, dir, "printf 'main\\n' > m.txt && git add m.txt && git commit -qm m")
	sh(t, wt, "printf 'y\\n' > y.txt")
	if _, err := w.CommitWork(ctx, "y", WorkCommit{}); err != nil {
		t.Fatal(err)
	}
	res, err = r.MergeBranch(ctx, "ralph/t1", "merge t1 again")
	if err != nil || res.FastForward || sh(t, dir, "git log -1 --format=%P | wc -w") != "2\n" || sh(t, dir, "cat y.txt") != "y\n" {
		t.Fatalf("merge = %+v, %v", res, err)
	}
	// Conflict: nothing touched.
	sh(t, dir, "printf 'one\\nmain\\n' > b.txt && git commit -qm b -- b.txt")
	sh(t, wt, "printf 'one\\nbranch\\n' > b.txt")
	if _, err := w.CommitWork(ctx, "b", WorkCommit{}); err != nil {
		t.Fatal(err)
	}
	before := sh(t, dir, "git rev-parse HEAD; sha256sum .git/index; git status --porcelain")
	_, err = r.MergeBranch(ctx, "ralph/t1", "m")
	var me *MergeError
	if !errors.As(err, &me) || me.Dirty || len(me.Files) != 1 || me.Files[0] != "b.txt" || !errors.Is(err, ErrMergeConflict) {
		t.Fatalf("conflict = %v", err)
	}
	if after := sh(t, dir, "git rev-parse HEAD; sha256sum .git/index; git status --porcelain"); after != before {
		t.Fatalf("a conflict changed the main work tree:\n%s\nwas\n%s", after, before)
	}
	// The person's uncommitted change in a file the merge writes.
	sh(t, wt, "git reset -q --hard HEAD~1 && printf 'readme\\nbranch\\n' > README.md")
	if _, err := w.CommitWork(ctx, "r", WorkCommit{}); err != nil {
		t.Fatal(err)
	}
	_, err = r.MergeBranch(ctx, "ralph/t1", "m")
	if !errors.As(err, &me) || !me.Dirty || me.Files[0] != "README.md" {
		t.Fatalf("dirty = %v", err)
	}
	if got := sh(t, dir, "cat README.md"); got != "readme\nmine\n" {
		t.Fatalf("the person's README.md = %q", got)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if list, err := r.Worktrees(ctx); err != nil || len(list) != 0 {
		t.Fatalf("worktrees = %v, %v", list, err)
	}
}
