package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trapRepo is a repository holding what a model can leave behind to get
// ralph's own git to run its code outside the sandbox: a nested
// repository added as a gitlink and a submodule whose repository lives
// in .git/modules, each configured with every key that names a program
// (fsmonitor, hooks, a clean filter its .gitattributes selects, a pager,
// an external diff), and with a dirty work tree so that git would look
// inside. Each trap writes its name into the returned file.
func trapRepo(t *testing.T) (dir, ran string) {
	t.Helper()
	dir = repo(t)
	ran = filepath.Join(t.TempDir(), "ran")
	trap := func(name string) string { return "echo " + name + " >> " + ran + "; false" }
	configure := func(where, prefix string) {
		sh(t, where, strings.Join([]string{
			"git config core.fsmonitor '" + trap(prefix+"-fsmonitor") + "'",
			"git config filter.evil.clean '" + trap(prefix+"-clean") + "'",
			"git config filter.evil.smudge '" + trap(prefix+"-smudge") + "'",
			"git config core.pager '" + trap(prefix+"-pager") + "'",
			"git config diff.external '" + trap(prefix+"-extdiff") + "'",
			"mkdir -p \"$(git rev-parse --git-path hooks)\"",
			"printf '#!/bin/sh\\n" + trap(prefix+"-hook") + "\\n' > \"$(git rev-parse --git-path hooks)/post-checkout\"",
			"chmod +x \"$(git rev-parse --git-path hooks)/post-checkout\"",
		}, " && "))
	}
	// The nested repository, added as a gitlink.
	sh(t, dir, "git init -q nest && cd nest && printf '* filter=evil\\n' > .gitattributes && printf 'a\\n' > a.txt && git -c filter.evil.clean=cat add . && git commit -qm n")
	configure(filepath.Join(dir, "nest"), "nest")
	sh(t, dir, "git add nest 2>/dev/null && git commit -qm 'add nest'")
	// A submodule from a repository outside, cloned into .git/modules.
	src := t.TempDir()
	sh(t, src, "git init -q -b main && printf 's\\n' > s.txt && git add . && git commit -qm s")
	sh(t, dir, "git -c protocol.file.allow=always submodule --quiet add "+src+" sub && git commit -qm 'add sub'")
	configure(filepath.Join(dir, "sub"), "sub")
	sh(t, dir, "printf '* filter=evil\\n' > sub/.gitattributes")
	// Dirty both, so that a git that recursed would refresh their index.
	write(t, filepath.Join(dir, "nest", "a.txt"), "changed\n")
	write(t, filepath.Join(dir, "sub", "s.txt"), "changed\n")
	write(t, filepath.Join(dir, "b.txt"), "one\ntwo\nthree\n")
	return dir, ran
}

func TestNestedRepositoriesRunNothingInRalphsGit(t *testing.T) {
	t.Parallel()
	dir, ran := trapRepo(t)
	ctx := context.Background()
	r := open(t, dir)
	if _, _, err := Context(ctx, dir, ".ralph"); err != nil {
		t.Fatal(err)
	}
	step := func(name string) {
		if b, err := os.ReadFile(ran); err == nil {
			t.Fatalf("after %s, ralph's git had run programs named by the model's repositories:\n%s", name, b)
		}
	}
	step("context")
	if _, err := r.WorkState(ctx, ".ralph"); err != nil {
		t.Fatal(err)
	}
	cps := NewCheckpoints(r, "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	step("baseline checkpoint")
	write(t, filepath.Join(dir, "b.txt"), "one\n")
	write(t, filepath.Join(dir, "nest", "a.txt"), "again\n")
	next, err := cps.Record(ctx, "1", "turn 1")
	if err != nil {
		t.Fatal(err)
	}
	step("checkpoint")
	if _, err := r.Diff(ctx, base.Commit, next.Commit); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Numstat(ctx, base.Commit, next.Commit, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(ctx, base.Commit, []string{"b.txt"}); err != nil {
		t.Fatal(err)
	}
	step("diff and restore")
	if _, err := r.CommitPaths(ctx, []string{"b.txt", "nest", "sub"}, "task"); err != nil {
		t.Fatal(err)
	}
	step("commit")
	wt := filepath.Join(t.TempDir(), "wt")
	if err := r.AddWorktree(ctx, wt, "task-1", "HEAD"); err != nil {
		t.Fatal(err)
	}
	w := open(t, wt)
	write(t, filepath.Join(wt, "new.txt"), "n\n")
	if _, err := w.CommitWork(ctx, "in the worktree", WorkCommit{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Snapshot(ctx, "unfinished"); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("ralph's git ran programs named by the model's repositories:\n%s", b)
	}
	// The traps are armed: the person's own git status would run them.
	sh(t, dir, "git status --short >/dev/null 2>&1 || true")
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the trap did not fire for plain git either, so the test proves nothing: %v", err)
	}
}

// TestRalphsGitHoldsNoCredential checks the environment of ralph's git:
// git reads configuration the model may have written, so it must not
// hold the model's key or any other credential.
func TestRalphsGitHoldsNoCredential(t *testing.T) {
	dir := repo(t)
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-secret")
	cmd := command(context.Background(), dir, nil, false, []string{"version"})
	for _, kv := range cmd.Env {
		if strings.Contains(kv, "secret") {
			t.Errorf("git's environment holds %s", kv)
		}
	}
}

// TestHooksInTheWorkTreeDoNotRun: a commit ralph makes for the person
// runs their hooks (through the runner, the sandbox), but not from a
// hooksPath inside the work tree, where the model writes.
func TestHooksInTheWorkTreeDoNotRun(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ran := filepath.Join(t.TempDir(), "ran")
	sh(t, dir, "mkdir .husky && printf '#!/bin/sh\\necho husky >> "+ran+"\\n' > .husky/pre-commit && chmod +x .husky/pre-commit && git config core.hooksPath .husky")
	write(t, filepath.Join(dir, "b.txt"), "changed\n")
	r := open(t, dir)
	r.Hooks = &fakeHooks{t: t, run: true}
	if _, err := r.CommitPaths(context.Background(), []string{"b.txt"}, "task"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a hook the model could have written ran")
	}
	// .git/hooks, which the sandbox keeps read-only, still runs.
	sh(t, dir, "git config --unset core.hooksPath && printf '#!/bin/sh\\necho person >> "+ran+"\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit")
	write(t, filepath.Join(dir, "b.txt"), "changed again\n")
	r = open(t, dir)
	r.Hooks = &fakeHooks{t: t, run: true}
	if _, err := r.CommitPaths(context.Background(), []string{"b.txt"}, "task 2"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ran); string(b) != "person\n" {
		t.Fatalf("the person's own hook did not run: %q", b)
	}
}

// TestANestedRepositoryWithoutACommitIsLeftOutOnce: `git init` in a
// subdirectory with nothing committed is a directory git can record
// neither as a gitlink nor file by file. The checkpoint records the rest,
// leaves it out and says so once, where it used to fail whole.
func TestANestedRepositoryWithoutACommitIsLeftOutOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh(t, dir, "git init -q -b main && printf 'a\\n' > a.txt && git add . && git commit -qm a && git init -q nest")
	r := open(t, dir)
	ctx := context.Background()
	cps := NewCheckpoints(r, "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	var told []string
	cps.SetWarn(func(s string) { told = append(told, s) })
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	write(t, filepath.Join(dir, "nest", "n.txt"), "n\n")
	cp, err := cps.Record(ctx, "1", "turn 1")
	if err != nil {
		t.Fatalf("the checkpoint failed for a nested repository without a commit: %v", err)
	}
	if cp == nil || len(cp.Files) == 0 || cp.Files[0].Path != "a.txt" {
		t.Fatalf("a.txt's change is not in the checkpoint: %+v", cp)
	}
	write(t, filepath.Join(dir, "a.txt"), "again\n")
	if _, err := cps.Record(ctx, "2", "turn 2"); err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || !strings.Contains(told[0], "nest/ is a git repository with no commit yet") {
		t.Fatalf("told %q, want one sentence naming nest/", told)
	}
}

// TestAMovedNestedGitWithoutACommitIsLeftOut: a command moves a nested
// repository's .git deeper (lib/.git to lib/sub/.git). The untracked
// cache still listed lib/ by its old name, since lib's parent did not
// change, and git add of lib/ refused the whole checkpoint for the
// repository inside, which has no commit. Now the status is taken again
// without the cache, and lib/sub/ is left out with one warning, as any
// nested repository without a commit.
func TestAMovedNestedGitWithoutACommitIsLeftOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh(t, dir, "git init -q -b main && printf 'a\\n' > a.txt && git add . && git commit -qm a && git init -q lib")
	// Directories older than the index: their cached listings are not
	// racy, so git trusts them (as it does in any tree a second old).
	past := time.Now().Add(-time.Hour)
	for _, d := range []string{dir, filepath.Join(dir, "lib")} {
		if err := os.Chtimes(d, past, past); err != nil {
			t.Fatal(err)
		}
	}
	r := open(t, dir)
	ctx := context.Background()
	cps := NewCheckpoints(r, "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	var told []string
	cps.SetWarn(func(s string) { told = append(told, s) })
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "mkdir lib/sub && mv lib/.git lib/sub/.git")
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	cp, err := cps.Record(ctx, "1", "turn 1")
	if err != nil {
		t.Fatalf("the checkpoint failed for a moved nested repository: %v", err)
	}
	if cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "a.txt" {
		t.Fatalf("a.txt's change is not the checkpoint's: %+v", cp)
	}
	if len(told) != 2 || !strings.Contains(told[1], "lib/sub/ is a git repository with no commit yet") {
		t.Fatalf("told %q, want lib/ and then lib/sub/ named once each", told)
	}
}

// TestACheckpointThatFailedHalfWayIsTakenByTheNext: a checkpoint that
// failed after it brought ralph's index up to the tree (here its ref
// could not be written) left the change in the index only; the next
// checkpoint's status, against that index, saw nothing, and the change
// was in no checkpoint. Now the next one takes it.
func TestACheckpointThatFailedHalfWayIsTakenByTheNext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh(t, dir, "git init -q -b main && printf 'a\\n' > a.txt && printf 'b\\n' > b.txt && git add . && git commit -qm a")
	r := open(t, dir)
	ctx := context.Background()
	cps := NewCheckpoints(r, "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	// A ref below the name makes the checkpoint's own ref unwritable.
	sh(t, dir, "git update-ref refs/ralph/s1/turn-1/x HEAD")
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	if _, err := cps.Record(ctx, "turn-1", "turn 1"); err == nil {
		t.Fatal("the checkpoint was taken after all, so the test proves nothing")
	}
	cp, err := cps.Record(ctx, "turn-2", "turn 2")
	if err != nil || cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "a.txt" {
		t.Fatalf("the next checkpoint does not hold a.txt's change: %+v, %v", cp, err)
	}
}

// TestACheckpointCutShortByACrashIsTakenByTheResumedSession: the same
// half-way checkpoint, but ralph dies before another (SIGKILL, a power
// cut), so nothing in memory says it failed. The resumed session, on the
// same index, must still take the change into its first checkpoint.
func TestACheckpointCutShortByACrashIsTakenByTheResumedSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh(t, dir, "git init -q -b main && printf 'a\\n' > a.txt && git add . && git commit -qm a")
	r := open(t, dir)
	ctx := context.Background()
	index := filepath.Join(t.TempDir(), "index")
	cps := NewCheckpoints(r, "s1", index, filepath.Join(dir, ".ralph"), "")
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	last := cps.Last()
	if base != nil && base.Commit != "" {
		last = base.Commit
	}
	sh(t, dir, "git update-ref refs/ralph/s1/turn-1/x HEAD")
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	if _, err := cps.Record(ctx, "turn-1", "turn 1"); err == nil {
		t.Fatal("the checkpoint was taken after all, so the test proves nothing")
	}
	resumed := NewCheckpoints(r, "s1", index, filepath.Join(dir, ".ralph"), last)
	cp, err := resumed.Record(ctx, "turn-2", "turn 2")
	if err != nil || cp == nil || len(cp.Files) != 1 || cp.Files[0].Path != "a.txt" {
		t.Fatalf("the resumed session's first checkpoint does not hold a.txt's change: %+v, %v", cp, err)
	}
}

// A partial clone the model made, whose promisor remote names a program
// as its uploadpack and allows the file protocol, does not have ralph's
// git log run that program to fetch a missing object: ralph's own git
// talks to no remote, whatever a configuration file allows.
func TestLazyFetchRunsNoTransport(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	payload := filepath.Join(t.TempDir(), "payload.sh")
	write(t, payload, "#!/bin/sh\necho ran >> '"+marker+"'\nexit 1\n")
	if err := os.Chmod(payload, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, `echo b >> b.txt && git -c user.name=m -c user.email=m@x commit -qam second &&
		P=$(git rev-parse HEAD~1) && rm -f .git/objects/${P:0:2}/${P:2} &&
		git config core.repositoryformatversion 1 && git config extensions.partialClone origin &&
		git config remote.origin.url "$PWD/b.txt" && git config remote.origin.promisor true &&
		git config remote.origin.uploadpack '`+payload+` x' && git config protocol.file.allow always`)
	// The person's own git would run it: the test shows the trap is set.
	if exec.Command("sh", "-c", "cd '"+dir+"' && git log -10 --format=%s >/dev/null 2>&1").Run(); true {
		if _, err := os.Stat(marker); err != nil {
			t.Skip("this git does not fetch lazily here, so the test proves nothing")
		}
		os.Remove(marker)
	}
	r := open(t, dir)
	_, _ = r.Git(context.Background(), nil, "log", "-10", "--format=%s")
	_, _ = r.Git(context.Background(), nil, "status", "--short")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("ralph's git ran the repository's uploadpack")
	}
}

// TestRalphsGitIgnoresReplaceRefs: a replace ref a command wrote
// (`git replace` of a blob of HEAD's) does not change what ralph's git
// reads of that blob, so undo and diff see the real file.
func TestRalphsGitIgnoresReplaceRefs(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, "base.txt"), "base\n")
	sh(t, dir, "git add base.txt && git commit -qm base && git replace $(git rev-parse HEAD:base.txt) $(echo EVIL | git hash-object -w --stdin)")
	if out, err := exec.Command("git", "-C", dir, "cat-file", "-p", "HEAD:base.txt").Output(); err != nil || string(out) != "EVIL\n" {
		t.Fatalf("the replace ref did not take for the person's git (%q, %v): the test shows nothing", out, err)
	}
	r := open(t, dir)
	out, err := r.Git(context.Background(), nil, "cat-file", "-p", "HEAD:base.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "base\n" {
		t.Errorf("ralph's git read %q through a replace ref, want the blob's own \"base\\n\"", out)
	}
}
