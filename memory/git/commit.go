package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// ErrDetached says HEAD is not on a branch: ralph does not commit there,
// since such commits are easily lost.
var ErrDetached = errors.New("HEAD is detached")

// ErrNoIdentity says git does not know who commits (user.name and
// user.email are not set).
var ErrNoIdentity = errors.New("git does not know your name and email")

// Branch returns the full ref of the checked-out branch (refs/heads/…),
// or ErrDetached.
func (r *Repo) Branch(ctx context.Context) (string, error) {
	out, err := r.Git(ctx, nil, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return "", ErrDetached
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// HeadNow returns HEAD's commit as it is now (Head is as it was at Open), "" on a branch without commits yet.
func (r *Repo) HeadNow(ctx context.Context) string {
	out, err := r.Git(ctx, nil, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Identity fails with ErrNoIdentity when a commit would fail for want of
// the person's name and email.
func (r *Repo) Identity(ctx context.Context) error {
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if _, err := r.Git(ctx, nil, "var", v); err != nil {
			return fmt.Errorf("%w (%w)", ErrNoIdentity, err)
		}
	}
	return nil
}

// CommitPaths commits the work tree's content of paths (relative to the
// top), and nothing else, on the checked-out branch. The person's hooks
// run as when they commit, but in the sandbox, and what the pre-commit
// hook leaves staged is what is committed, as with git (hooks.go). The
// commit is built in an index of ralph's own, seeded from HEAD, where no
// command can write (commitindex.go), so whatever the person has staged
// stays out of it; afterwards the person's index learns the committed
// paths (so `git status` does not show them as changes to undo), except
// paths they had staged something of their own for, which stay as they
// were. It returns "" and no error when paths hold nothing HEAD lacks.
//
// The commit and the update of the person's index are two git steps: a
// record of the intent, made before the commit, has a ralph killed
// between them finish the second later (intent.go, FinishPending).
func (r *Repo) CommitPaths(ctx context.Context, paths []string, message string) (string, error) {
	ref, err := r.Branch(ctx)
	if err != nil {
		return "", err
	}
	defer lockIntent(r.GitDir)()
	if err := r.finishFirst(ctx); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	// The commit updates the person's index: never through a link a
	// command planted there (gitdoor.go).
	if err := asideIndex(r.GitDir); err != nil && !errors.Is(err, ErrIndexSetAside) {
		return "", fmt.Errorf("commit: %w", err)
	}
	// git-lfs, the clean filter of a Git LFS file, writes through a link
	// at the lfs directory (gitdoor.go).
	if err := asideLFS(r.common()); err != nil && !errors.Is(err, errLFSSetAside) {
		return "", fmt.Errorf("commit: %w", err)
	}
	ix, err := newCommitIndex()
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	defer ix.remove()
	old := r.HeadNow(ctx)
	if err := r.seed(ctx, ix, old, false); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	// A path the task created and removed again is in neither the work
	// tree nor HEAD; git add would refuse it.
	known, err := r.listed(ctx, ix.env(), paths)
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	var take []string
	for _, p := range paths {
		if _, err := os.Lstat(r.Abs(p)); err == nil || known[p] {
			take = append(take, p)
		}
	}
	if len(take) == 0 {
		return "", nil
	}
	if err := r.addPaths(ctx, ix.env(), take); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	if same, err := r.indexMatches(ctx, ix.env(), old); err != nil || same {
		return "", err
	}
	// The record is made once the hooks are done, when the tree the
	// commit takes is known: the commit it announces is the one with
	// that tree whose parent is old.
	ix.beforeCommit = func(ctx context.Context) error {
		tree, err := r.Git(ctx, ix.env(), "write-tree")
		if err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		if err := r.recordIntent(intent{Op: opCommit, Ref: ref, Old: old, Tree: strings.TrimSpace(string(tree))}); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		r.step("intent")
		return nil
	}
	changed, err := r.commit(ctx, ix, nil, message)
	if err != nil {
		if r.HeadNow(ctx) == old {
			// The branch did not move; a record that cannot be removed
			// is forgotten by the next FinishPending all the same.
			_ = r.dropIntent()
		}
		return "", err
	}
	r.step("committed")
	commit := r.HeadNow(ctx)
	// The person's index learns what was committed of the paths ralph
	// staged and of those the pre-commit hook changed, except where the
	// person had staged something of their own, which their index keeps.
	for _, p := range changed {
		if !slices.Contains(take, p) {
			take = append(take, p)
		}
	}
	staged, err := r.stagedIn(ctx, old, take)
	if err != nil {
		return commit, fmt.Errorf("committed %s, but your index could not be updated for its files (git status shows them changed): %w", short(commit), err)
	}
	var sync []string
	for _, p := range take {
		if !slices.Contains(staged, p) {
			sync = append(sync, p)
		}
	}
	if len(sync) > 0 {
		if _, err := runPaths(ctx, r.Top, nil, sync, "reset", "-q", commit); err != nil {
			return commit, fmt.Errorf("committed %s, but your index could not be updated for its files (git status shows them changed): %w", short(commit), err)
		}
	}
	r.step("reset")
	r.settled()
	return commit, nil
}

// finishFirst finishes what a killed ralph left half-done in the work
// tree (FinishPending) before a new change starts; the caller holds the
// work tree's lock. What it finished is told to the person.
func (r *Repo) finishFirst(ctx context.Context) error {
	note, err := r.finishPending(ctx)
	if note != "" {
		r.warn(note)
	}
	return err
}

// listed returns which of paths the index (env's) holds.
func (r *Repo) listed(ctx context.Context, env []string, paths []string) (map[string]bool, error) {
	out, err := r.Git(ctx, env, append([]string{"ls-files", "-z", "--cached", "--"}, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			known[string(p)] = true
		}
	}
	return known, nil
}

// indexMatches reports whether the index (env's) holds the tree of
// commit ("" for none: an empty index).
func (r *Repo) indexMatches(ctx context.Context, env []string, commit string) (bool, error) {
	if commit == "" {
		out, err := r.Git(ctx, env, "ls-files", "-z", "--cached")
		return len(out) == 0, err
	}
	_, err := r.Git(ctx, env, "diff-index", "--cached", "--quiet", commit, "--")
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, err
}

// stagedIn lists which of paths the person's index holds differently
// from commit (all it holds of them when commit is "").
func (r *Repo) stagedIn(ctx context.Context, commit string, paths []string) ([]string, error) {
	args := []string{"diff-index", "--cached", "--name-only", "-z", commit, "--"}
	if commit == "" {
		args = []string{"ls-files", "-z", "--cached", "--"}
	}
	out, err := r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, append(args, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	return splitNul(out), nil
}

func nulList(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

func splitNul(out []byte) []string {
	var list []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			list = append(list, string(p))
		}
	}
	return list
}

// short is a commit's abbreviation for messages.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
