package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// identity is the author and committer of the commits ralph makes in
// the person's own history (a snapshot of unfinished work), so they need
// no user.name or user.email and never pass for the person's.
var identity = []string{
	"GIT_AUTHOR_NAME=ralph", "GIT_AUTHOR_EMAIL=ralph@localhost",
	"GIT_COMMITTER_NAME=ralph", "GIT_COMMITTER_EMAIL=ralph@localhost",
}

// ErrMergeConflict is wrapped by a merge that was not made: the branches
// conflict, or the person's uncommitted changes are in the way. Nothing
// was changed.
var ErrMergeConflict = errors.New("merge conflict")

// MergeError says which files kept a branch from being merged.
type MergeError struct {
	Branch string
	Files  []string
	// Dirty: the person has uncommitted changes to Files, which the merge
	// would overwrite; otherwise the branches conflict in them.
	Dirty bool
}

func (e *MergeError) Error() string {
	if e.Dirty {
		return fmt.Sprintf("merging %s would overwrite uncommitted changes to %s in the main work tree", e.Branch, strings.Join(e.Files, ", "))
	}
	return fmt.Sprintf("merging %s conflicts in %s", e.Branch, strings.Join(e.Files, ", "))
}

func (e *MergeError) Is(target error) bool { return target == ErrMergeConflict }

// Worktree is a linked work tree of the repository.
type Worktree struct {
	Dir    string
	Branch string // short name, "" when detached
}

// Worktrees lists the repository's linked work trees (not the main one).
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.Git(ctx, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var list []Worktree
	var cur *Worktree
	for _, f := range splitNul(out) {
		switch {
		case strings.HasPrefix(f, "worktree "):
			list = append(list, Worktree{Dir: strings.TrimPrefix(f, "worktree ")})
			cur = &list[len(list)-1]
		case strings.HasPrefix(f, "branch ") && cur != nil:
			cur.Branch = strings.TrimPrefix(strings.TrimPrefix(f, "branch "), "refs/heads/")
		}
	}
	if len(list) > 0 {
		list = list[1:] // the main work tree comes first
	}
	return list, nil
}

// AddWorktree checks out a new branch made from base into dir, a new
// linked work tree. dir's parent must exist: the caller makes it through
// its own door (ralph's .ralph/worktrees through the project's, which
// follows no link), since a directory made here by name would follow a
// link a command planted on the way. git runs no post-checkout hook: the
// caller runs the person's in the sandbox of the new tree (PostCheckout).
func (r *Repo) AddWorktree(ctx context.Context, dir, branch, base string) error {
	if _, err := runCmd(ctx, SlowTimeout, false, r.Top, nil, nil, "worktree", "add", "-q", "-b", branch, dir, base); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// RemoveWorktree removes a linked work tree, changes and all, and its
// administrative files, by git alone, and forgets trees whose directories
// are gone. It never removes a directory itself: a path that git does not
// list as its worktree may be reached through a link a command planted
// (.ralph/worktrees -> ~), so a directory git could not remove is the
// caller's to remove through its own door, when git lists it (Listed).
func (r *Repo) RemoveWorktree(ctx context.Context, dir string) error {
	_, err := r.Git(ctx, nil, "worktree", "remove", "--force", "--force", dir)
	perr := r.PruneWorktrees(ctx)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return perr
}

// Listed reports whether git lists dir as one of the repository's linked
// work trees.
func (r *Repo) Listed(ctx context.Context, dir string) bool {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return false
	}
	for _, w := range list {
		if w.Dir == dir {
			return true
		}
	}
	return false
}

// PruneWorktrees forgets linked work trees whose directories are gone.
func (r *Repo) PruneWorktrees(ctx context.Context) error {
	if _, err := r.Git(ctx, nil, "worktree", "prune"); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// Rev returns the commit a revision names, "" when it names none.
func (r *Repo) Rev(ctx context.Context, rev string) string {
	out, err := r.Git(ctx, nil, "rev-parse", "-q", "--verify", rev+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// DeleteBranch deletes a branch whatever it holds.
func (r *Repo) DeleteBranch(ctx context.Context, branch string) error {
	_, err := r.Git(ctx, nil, "branch", "-q", "-D", branch)
	return err
}

// Snapshot records every change of the work tree as a commit on its
// branch without running hooks: ralph's own record of unfinished work on
// ralph's own branch, so removing the work tree loses nothing. It is
// built in an index of ralph's own, seeded from HEAD (commitindex.go), as
// a task's commit is: what the model's commands staged in the work
// tree's own index (a file .gitignore keeps out, added with -f) is not
// recorded unless the work tree holds it as git add sees it. It returns
// "" when nothing changed.
func (r *Repo) Snapshot(ctx context.Context, message string) (string, error) {
	ix, err := newCommitIndex()
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	defer ix.remove()
	head := r.HeadNow(ctx)
	if err := r.seed(ctx, ix, head, true); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	if err := r.addAll(ctx, ix.env()); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	if same, err := r.indexMatches(ctx, ix.env(), head); err != nil || same {
		return "", err
	}
	tree, err := r.Git(ctx, ix.env(), "write-tree")
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	args := []string{"commit-tree", strings.TrimSpace(string(tree)), "-m", message}
	if head != "" {
		args = append(args, "-p", head)
	}
	commit, err := r.Git(ctx, identity, args...)
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	c := strings.TrimSpace(string(commit))
	if _, err := r.Git(ctx, nil, "update-ref", "-m", "ralph: unfinished work", "HEAD", c); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	return c, nil
}

// MergeResult is a branch merged into the checked-out one.
type MergeResult struct {
	Commit      string
	FastForward bool
	// Files are the paths (relative to the top) the merge changed.
	Files []string
}

// MergeBranch merges branch into the branch checked out in this work
// tree: a fast-forward when possible, otherwise a merge commit with
// message. It never runs `git merge`, whose abort can lose uncommitted
// changes: the merge is computed apart (git merge-tree), nothing is
// touched when the branches conflict or when the person has uncommitted
// changes (staged or not, or an untracked file) to a file the merge
// changes (both a *MergeError wrapping ErrMergeConflict), and then only
// the merged files are written, into the index and the work tree. The
// branch moves only if nobody moved it meanwhile.
func (r *Repo) MergeBranch(ctx context.Context, branch, message string) (*MergeResult, error) {
	ref, err := r.Branch(ctx)
	if err != nil {
		return nil, err
	}
	defer lockIntent(r.GitDir)()
	if err := r.finishFirst(ctx); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	old, tip := r.HeadNow(ctx), r.Rev(ctx, "refs/heads/"+branch)
	if old == "" || tip == "" {
		return nil, fmt.Errorf("merge: %s or the checked-out branch has no commit", branch)
	}
	if r.IsAncestor(ctx, tip, old) {
		return &MergeResult{Commit: old}, nil // merged already
	}
	res := &MergeResult{Commit: tip, FastForward: r.IsAncestor(ctx, old, tip)}
	if !res.FastForward {
		out, err := r.Git(ctx, nil, "merge-tree", "--write-tree", "--name-only", "--no-messages", old, tip)
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		switch {
		case err != nil && exitCode(err) == 1 && len(lines) > 1:
			return nil, &MergeError{Branch: branch, Files: lines[1:]}
		case err != nil:
			return nil, fmt.Errorf("merge: %w", err)
		}
		commit, err := r.Git(ctx, nil, "commit-tree", lines[0], "-p", old, "-p", tip, "-m", message)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		res.Commit = strings.TrimSpace(string(commit))
	}
	out, err := r.Git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", old, res.Commit)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	res.Files = splitNul(out)
	if dirty, err := r.dirty(ctx, old, res.Files); err != nil {
		return nil, err
	} else if len(dirty) > 0 {
		return nil, &MergeError{Branch: branch, Files: dirty, Dirty: true}
	}
	// Moving the branch and writing the files are two steps: the record
	// has a ralph killed between them write the files later (intent.go).
	if err := r.recordIntent(intent{Op: opMerge, Ref: ref, Old: old, New: res.Commit, Branch: branch}); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	r.step("intent")
	if _, err := r.Git(ctx, nil, "update-ref", "-m", "ralph: merge "+branch, ref, res.Commit, old); err != nil {
		if r.Rev(ctx, ref) == old {
			_ = r.dropIntent()
		}
		return nil, fmt.Errorf("merge: the branch moved meanwhile: %w", err)
	}
	r.step("update-ref")
	if len(res.Files) > 0 {
		// The merged files were as HEAD had them (checked above), so the
		// index and the work tree take the merge's version of them.
		_, err := runPaths(ctx, r.Top, nil, res.Files,
			"restore", "--source="+res.Commit, "--staged", "--worktree")
		if err != nil {
			return res, fmt.Errorf("merged %s as %s, but its files could not all be written (git status shows which): %w", branch, short(res.Commit), err)
		}
	}
	r.step("restore")
	r.settled()
	return res, nil
}

// IsAncestor reports whether commit a is b or one of its ancestors.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) bool {
	_, err := r.Git(ctx, nil, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// dirty lists which of paths differ from commit in the person's index or
// work tree, or are untracked files there.
func (r *Repo) dirty(ctx context.Context, commit string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(list []string) {
		for _, p := range list {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	env := []string{"GIT_OPTIONAL_LOCKS=0"}
	for _, args := range [][]string{
		{"diff", "--name-only", "-z", "--no-renames", "--ignore-submodules=dirty", commit, "--"},
		{"diff", "--cached", "--name-only", "-z", "--no-renames", commit, "--"},
		{"ls-files", "-z", "--others", "--"},
	} {
		list, err := r.Git(ctx, env, append(args, literal(paths)...)...)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		add(splitNul(list))
	}
	return out, nil
}
