package git

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestCommitWorkAsAWorkerCommits: ralph-temporal's attempt commit (every
// change but the loop's own files, no hooks, as ralph) and its
// integration commit (the loop's files only), then their pushes, one of
// which a moved branch rejects as a push error.
func TestCommitWorkAsAWorkerCommits(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote.git")
	sh(t, dir, "git init -q --bare "+remote+" && git remote add origin "+remote+" && git push -q origin HEAD:refs/heads/main")
	// A hook of the person's that would refuse every commit: a worker
	// runs none, and a commit that has one to run and no runner is
	// refused.
	sh(t, dir, `mkdir -p .git/hooks && printf '#!/bin/sh\nexit 1\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`)
	r := open(t, dir)
	write(t, filepath.Join(dir, "code.go"), "package x\n")
	write(t, filepath.Join(dir, "RALPH_TASKS.md"), "- [x] a task\n")
	if _, err := r.CommitWork(ctx, "with hooks", WorkCommit{}); !errors.Is(err, ErrNoHookRunner) {
		t.Fatalf("a commit with the person's hook and no runner: %v", err)
	}
	sh(t, dir, "git reset -q")
	leave := []string{"RALPH_TASKS.md", "RALPH_PROGRESS.md"}
	c, err := r.CommitWork(ctx, "ralph: t1 attempt 1\n\nsummary", WorkCommit{Leave: leave, NoHooks: true, AsRalph: true})
	if err != nil || c == "" {
		t.Fatalf("the attempt's commit = %q, %v", c, err)
	}
	if got := sh(t, dir, "git show --name-only --format=%an%n%B HEAD"); got != "ralph\nralph: t1 attempt 1\n\nsummary\n\n\ncode.go\n" {
		t.Fatalf("the attempt's commit:\n%s", got)
	}
	if got := sh(t, dir, "git status --porcelain"); got != "?? RALPH_TASKS.md\n" {
		t.Fatalf("the task file left out is not still there to commit:\n%s", got)
	}
	if err := r.Push(ctx, "origin", "HEAD:refs/heads/ralph/t1", true); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, dir, "git --git-dir="+remote+" rev-parse ralph/t1"); got != c+"\n" {
		t.Fatalf("the remote's ralph/t1 = %s, want %s", got, c)
	}
	// The integration: the loop's files only, though another changed.
	write(t, filepath.Join(dir, "stray.txt"), "not the loop's\n")
	c2, err := r.CommitWork(ctx, "ralph: t1", WorkCommit{Only: leave, NoHooks: true})
	if err != nil || c2 == "" {
		t.Fatalf("the integration's commit = %q, %v", c2, err)
	}
	if got := sh(t, dir, "git show --name-only --format= HEAD"); got != "RALPH_TASKS.md\n" {
		t.Fatalf("the integration's commit holds\n%s", got)
	}
	if again, err := r.CommitWork(ctx, "again", WorkCommit{Only: leave, NoHooks: true}); err != nil || again != "" {
		t.Fatalf("nothing of the loop's changed, yet CommitWork = %q, %v", again, err)
	}
	// Somebody moved main meanwhile: the push is refused, as a push.
	sh(t, dir, "git push -q origin HEAD:refs/heads/main && git reset -q --hard HEAD~1 && git commit -q --no-verify --allow-empty -m other")
	err = r.Push(ctx, "origin", "HEAD:refs/heads/main", false)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Command != "push" {
		t.Fatalf("a rejected push: %v", err)
	}
}
