package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// hookCall is one hook a fakeHooks was asked to run.
type hookCall struct {
	name string
	args []string
	env  []string
	dir  string
}

// fakeHooks is a HookRunner that records the hooks it is asked to run
// and, when run is set, runs them directly (as the sandbox would, less
// the sandbox); fail makes it fail the hook of that name without running
// it, notRun makes every hook one that could not run.
type fakeHooks struct {
	t      *testing.T
	run    bool
	fail   string
	notRun bool

	mu    sync.Mutex
	calls []hookCall
	dirs  []string
}

func (f *fakeHooks) HookDir() (string, error) {
	d, err := os.MkdirTemp(f.t.TempDir(), "hook-")
	f.mu.Lock()
	f.dirs = append(f.dirs, d)
	f.mu.Unlock()
	return d, err
}

func (f *fakeHooks) RunHook(ctx context.Context, path string, args, env []string, dir string) (string, error) {
	name := filepath.Base(path)
	f.mu.Lock()
	f.calls = append(f.calls, hookCall{name, args, env, dir})
	f.mu.Unlock()
	switch {
	case f.notRun:
		return "", fmt.Errorf("%w: no sandbox here", ErrHookNotRun)
	case f.fail == name:
		return "the fake says no", errors.New("exit status 1")
	case !f.run:
		return "", nil
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (f *fakeHooks) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n []string
	for _, c := range f.calls {
		n = append(n, c.name)
	}
	return n
}

// hook writes the person's hook name in dir's .git/hooks.
func hook(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, ".git", "hooks", name)
	write(t, p, "#!/bin/sh\n"+body+"\n")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestCommitRunsThePersonsHooksThroughTheRunner: git runs no hook of a
// commit ralph makes; ralph asks the runner (the sandbox) for each, in
// git's order, with git's arguments, the scratch index's copy and the
// work tree's top, and commits the message the hooks left.
func TestCommitRunsThePersonsHooksThroughTheRunner(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	seen := filepath.Join(t.TempDir(), "seen")
	hook(t, dir, "pre-commit", `git diff --cached --name-only > `+seen)
	hook(t, dir, "prepare-commit-msg", `echo "prepared $2" >> "$1"`)
	hook(t, dir, "commit-msg", `echo "Signed-off-by: hook" >> "$1"`)
	hook(t, dir, "post-commit", `git log -1 --format=%s >> `+seen)
	hook(t, dir, "post-checkout", `echo checkout >> `+seen)
	write(t, filepath.Join(dir, "b.txt"), "task\n")
	write(t, filepath.Join(dir, "new.txt"), "task\n")
	write(t, filepath.Join(dir, "README.md"), "the person's, not the task's\n")
	r := open(t, dir)
	fake := &fakeHooks{t: t, run: true}
	r.Hooks = fake
	ctx := context.Background()
	commit, err := r.CommitPaths(ctx, []string{"b.txt", "new.txt"}, "Task\n")
	if err != nil || commit == "" {
		t.Fatalf("CommitPaths = %q, %v", commit, err)
	}
	if got, want := fake.names(), []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"}; !slices.Equal(got, want) {
		t.Fatalf("hooks run: %v, want %v", got, want)
	}
	// The pre-commit hook saw the task's files staged, and only them.
	if got := sh(t, dir, "cat "+seen); got != "b.txt\nnew.txt\nTask prepared message Signed-off-by: hook\n" {
		t.Fatalf("the hooks saw:\n%s", got)
	}
	if got := sh(t, dir, "git log -1 --format=%B"); got != "Task\nprepared message\nSigned-off-by: hook\n\n" {
		t.Fatalf("message = %q", got)
	}
	for _, c := range fake.calls {
		if c.dir != r.Top || envValue(c.env, "GIT_DIR") != r.GitDir || !strings.HasPrefix(envValue(c.env, "GIT_INDEX_FILE"), fake.dirs[0]+"/") {
			t.Errorf("%s ran in %s with %v", c.name, c.dir, c.env)
		}
	}
	if c := fake.calls[1]; len(c.args) != 2 || c.args[0] != filepath.Join(fake.dirs[0], "COMMIT_EDITMSG") || c.args[1] != "message" {
		t.Errorf("prepare-commit-msg's arguments: %v", c.args)
	}
	if _, err := os.Stat(fake.dirs[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the hooks' directory is left: %v", err)
	}

	// Recorded only, not run: git itself runs none of them.
	fake = &fakeHooks{t: t}
	r.Hooks = fake
	write(t, filepath.Join(dir, "b.txt"), "task again\n")
	before := sh(t, dir, "cat "+seen)
	if c, err := r.CommitPaths(ctx, []string{"b.txt"}, "Again\n"); err != nil || c == "" {
		t.Fatalf("CommitPaths = %q, %v", c, err)
	}
	if len(fake.calls) != 4 || sh(t, dir, "cat "+seen) != before {
		t.Fatalf("git ran a hook itself, or ralph skipped one: %v", fake.names())
	}
	if got := sh(t, dir, "git log -1 --format=%B"); got != "Again\n\n" {
		t.Fatalf("message = %q", got)
	}
}

// TestCommitHookRefuses: a hook that fails refuses the commit as git's
// commit does, with what it said; one that cannot run refuses it too;
// a post-commit that fails is only told.
func TestCommitHookRefuses(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit"} {
		hook(t, dir, h, "true")
	}
	r := open(t, dir)
	ctx := context.Background()
	head := r.HeadNow(ctx)
	commit := func(f *fakeHooks) error {
		r.Hooks = nil
		if f != nil {
			r.Hooks = f
		}
		write(t, filepath.Join(dir, "b.txt"), fmt.Sprintf("%p\n", f))
		_, err := r.CommitPaths(ctx, []string{"b.txt"}, "Task\n")
		return err
	}

	fake := &fakeHooks{t: t, fail: "pre-commit"}
	err := commit(fake)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Stderr != "the fake says no" || !strings.Contains(err.Error(), "your pre-commit hook refused it") {
		t.Fatalf("refused commit: %v", err)
	}
	if r.HeadNow(ctx) != head || !slices.Equal(fake.names(), []string{"pre-commit"}) {
		t.Fatalf("a refused commit moved HEAD, or more hooks ran: %v", fake.names())
	}

	fake = &fakeHooks{t: t, fail: "commit-msg"}
	if err := commit(fake); !errors.As(err, &ce) || r.HeadNow(ctx) != head {
		t.Fatalf("commit-msg refusing: %v", err)
	}

	fake = &fakeHooks{t: t, notRun: true}
	if err := commit(fake); !errors.Is(err, ErrHookNotRun) || r.HeadNow(ctx) != head {
		t.Fatalf("a hook that could not run: %v", err)
	}

	if err := commit(nil); !errors.Is(err, ErrNoHookRunner) || r.HeadNow(ctx) != head {
		t.Fatalf("no runner: %v", err)
	}

	fake = &fakeHooks{t: t, fail: "post-commit"}
	if err := commit(fake); err != nil || r.HeadNow(ctx) == head {
		t.Fatalf("a failed post-commit: %v", err)
	}
}

// TestCommitWithoutHooksNeedsNoRunner: a repository without hooks, or
// with only hooks that do not count as the person's, commits without a
// runner.
func TestCommitWithoutHooksNeedsNoRunner(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	hook(t, dir, "pre-push", "exit 1")                                   // no commit hook
	sh(t, dir, "printf '#!/bin/sh\\nexit 1\\n' > .git/hooks/pre-commit") // not executable: git skips it too
	write(t, filepath.Join(dir, "b.txt"), "task\n")
	if c, err := open(t, dir).CommitPaths(context.Background(), []string{"b.txt"}, "Task\n"); err != nil || c == "" {
		t.Fatalf("CommitPaths = %q, %v", c, err)
	}
}

// TestCommitMessageLinkIsNotFollowed: a commit-msg hook runs the tree's
// code in the sandbox, which may put a link to a secret at the message
// file's name; ralph reads the message without following it, so the
// secret never lands in the commit.
func TestCommitMessageLinkIsNotFollowed(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	secret := filepath.Join(t.TempDir(), "id_rsa")
	write(t, secret, "PRIVATE KEY\n")
	hook(t, dir, "commit-msg", `rm -f "$1" && ln -s `+secret+` "$1"`)
	write(t, filepath.Join(dir, "b.txt"), "task\n")
	r := open(t, dir)
	r.Hooks = &fakeHooks{t: t, run: true}
	head := r.HeadNow(context.Background())
	_, err := r.CommitPaths(context.Background(), []string{"b.txt"}, "Task\n")
	if err == nil || r.HeadNow(context.Background()) != head {
		t.Fatalf("a message file turned link was followed: %v", err)
	}
	if strings.Contains(sh(t, dir, "git log --format=%B"), "PRIVATE") {
		t.Fatal("the secret is in a commit message")
	}
}

// TestWorktreeHooksRunThroughTheRunner: `git worktree add` runs no
// post-checkout; PostCheckout asks the runner, in the new tree, with
// git's arguments; CommitWork runs the commit's hooks there.
func TestWorktreeHooksRunThroughTheRunner(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ran := filepath.Join(t.TempDir(), "ran")
	hook(t, dir, "post-checkout", "echo checkout >> "+ran)
	hook(t, dir, "pre-commit", "git diff --cached --name-only >> "+ran)
	r := open(t, dir)
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	if err := r.AddWorktree(ctx, wt, "ralph/t1", "HEAD"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("git ran the post-checkout hook itself")
	}
	w := open(t, wt)
	if err := w.PostCheckout(ctx); !errors.Is(err, ErrNoHookRunner) {
		t.Fatalf("PostCheckout without a runner = %v", err)
	}
	fake := &fakeHooks{t: t, run: true}
	w.Hooks = fake
	if err := w.PostCheckout(ctx); err != nil {
		t.Fatal(err)
	}
	head := w.HeadNow(ctx)
	if c := fake.calls[0]; c.name != "post-checkout" || c.dir != w.Top || !slices.Equal(c.args, []string{strings.Repeat("0", len(head)), head, "1"}) {
		t.Fatalf("post-checkout: %+v", c)
	}
	write(t, filepath.Join(wt, "x.txt"), "x\n")
	if c, err := w.CommitWork(ctx, "x", WorkCommit{}); err != nil || c == "" {
		t.Fatalf("CommitWork = %q, %v", c, err)
	}
	if got := sh(t, dir, "cat "+ran); got != "checkout\nx.txt\n" {
		t.Fatalf("the hooks saw:\n%s", got)
	}
	fake.fail = "post-checkout"
	if err := w.PostCheckout(ctx); err == nil {
		t.Fatal("a failed post-checkout passed")
	}
}
