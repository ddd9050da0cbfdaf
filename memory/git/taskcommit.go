package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// A task's commit is made here, for both hosts of the task loop: the
// local loop's --commit in a task's worktree (coordinator/taskgit) and
// ralph-temporal's workers, which commit an attempt on its branch and
// the integration's task list on the target branch. The sequence (add
// what changed, keeping nested repositories from git add; leave the
// loop's own files out; nothing to commit when the index holds HEAD's
// tree; commit without git's hooks) is one, and the two hosts differ only
// in what the options say: whose hooks run, who commits.

// TaskBranch is the branch a task's work is committed on, name being the
// task's id (as a branch name may hold it): the same namespace for a
// task's worktree on both hosts, so a person finds a kept branch under
// ralph/ wherever it was worked.
func TaskBranch(name string) string { return "ralph/" + name }

// WorkCommit says how CommitWork commits.
type WorkCommit struct {
	// Only, when set, are the paths (relative to the top) committed,
	// whatever else changed; a path that is neither in the work tree nor
	// in the index is passed over. Empty: every change of the work tree.
	Only []string
	// Leave are paths (relative to the top) whose changes stay out of
	// the commit: the task loop's own files, which another writer owns.
	Leave []string
	// NoHooks commits without the person's hooks: ralph-temporal's
	// workers commit in clones of their own, where no person's hook
	// belongs and no sandbox runs one. Otherwise the person's hooks run
	// in the sandbox (hooks.go), and a commit that has one to run is
	// refused when the Repo has no HookRunner.
	NoHooks bool
	// AsRalph commits as ralph (the identity of a snapshot), not as the
	// person git's configuration names: a fresh worker machine has
	// none.
	AsRalph bool
}

// CommitWork commits the work tree's changes (o.Only's, else all, less
// o.Leave's) on the checked-out branch. It returns the commit, or "" when
// nothing changed. With the person's hooks (a task's worktree) the commit
// is built in an index of ralph's own, seeded from HEAD, where no command
// can write (commitindex.go), and what the pre-commit hook leaves staged
// is what is committed (hooks.go); the work tree's own index, which the
// model's commands write, adds nothing to it, and learns the commit
// afterwards. Without hooks (ralph-temporal's workers, in clones of their
// own where no hook of the person's judges anything) the work tree's own
// index is used.
func (r *Repo) CommitWork(ctx context.Context, message string, o WorkCommit) (string, error) {
	var env []string
	if o.AsRalph {
		env = identity
	}
	head := r.HeadNow(ctx)
	if o.NoHooks {
		if err := r.stageWork(ctx, env, head, o); err != nil {
			return "", err
		}
		if same, err := r.indexMatches(ctx, nil, head); err != nil || same {
			return "", err
		}
		// git runs no hook itself: --no-verify besides core.hooksPath=/dev/null.
		if _, err := runCmd(ctx, SlowTimeout, false, r.Top, env, []byte(message), "commit", "-q", "--no-verify", "--cleanup=whitespace", "-F", "-"); err != nil {
			return "", err
		}
		return r.HeadNow(ctx), nil
	}
	ix, err := newCommitIndex()
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	defer ix.remove()
	if err := r.seed(ctx, ix, head, true); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	if err := r.stageWork(ctx, ix.env(env...), head, o); err != nil {
		return "", err
	}
	if same, err := r.indexMatches(ctx, ix.env(), head); err != nil || same {
		return "", err
	}
	if _, err := r.commit(ctx, ix, env, message); err != nil {
		return "", err
	}
	commit := r.HeadNow(ctx)
	if err := r.learnHead(ctx); err != nil {
		return commit, fmt.Errorf("committed %s, but the work tree's index could not be updated (git status shows its files changed): %w", short(commit), err)
	}
	return commit, nil
}

// stageWork brings the index (env's) up to the work tree's changes for a
// commit of o.Only's paths, else of all, less o.Leave's.
func (r *Repo) stageWork(ctx context.Context, env []string, head string, o WorkCommit) error {
	if err := r.addWork(ctx, env, o.Only); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if len(o.Leave) == 0 {
		return nil
	}
	// Back to HEAD's version in the index; the work tree keeps the
	// change. Before the first commit there is no HEAD to go back to,
	// and the paths leave the index.
	args := append([]string{"reset", "-q", head, "--"}, o.Leave...)
	if head == "" {
		args = append([]string{"rm", "-q", "--cached", "--ignore-unmatch", "--"}, o.Leave...)
	}
	if _, err := r.Git(ctx, append(env, "GIT_LITERAL_PATHSPECS=1"), args...); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// learnHead puts the work tree's own index at HEAD, keeping the work
// tree (git reset --mixed), after ralph committed from an index of its
// own: what the commit holds no longer shows as staged against it. It
// never writes through a link a command planted at the index's name.
func (r *Repo) learnHead(ctx context.Context) error {
	if err := asideIndex(r.GitDir); err != nil && !errors.Is(err, ErrIndexSetAside) {
		return err
	}
	if err := asideLFS(r.common()); err != nil && !errors.Is(err, errLFSSetAside) {
		return err
	}
	_, err := r.GitSized(ctx, nil, "reset", "-q")
	return err
}

// addWork brings the index up to the work tree: for only's paths that
// git knows of or finds there, or, with none given, for the whole tree.
func (r *Repo) addWork(ctx context.Context, env []string, only []string) error {
	if len(only) == 0 {
		return r.addAll(ctx, env)
	}
	// ls-files lists the paths the index holds (a deletion to commit)
	// or the work tree has; git add would refuse one that is in
	// neither.
	out, err := r.Git(ctx, append(env, "GIT_LITERAL_PATHSPECS=1"), append([]string{"ls-files", "-z", "--cached", "--others", "--"}, only...)...)
	if err != nil {
		return err
	}
	var take []string
	for _, p := range splitNul(out) {
		if !contains(take, p) {
			take = append(take, p)
		}
	}
	if len(take) == 0 {
		return nil
	}
	return r.addPaths(ctx, env, take)
}

// Push pushes refspec to the remote called remote with the person's
// transport and credentials (RemoteCommand's git, which runs no hook,
// pre-push included), force when asked: ralph-temporal's workers sending
// a task's branch, and the integration's commit of the target branch. A
// rejection is a *CommandError whose Command is "push".
func (r *Repo) Push(ctx context.Context, remote, refspec string, force bool) error {
	args := []string{"push", "--quiet"}
	if force {
		args = append(args, "--force")
	}
	args = append(args, remote, refspec)
	cmd := RemoteCommand(ctx, r.Top, nil, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := runWatched(cmd); err != nil {
		return commandError(ctx, SlowTimeout, args, strings.TrimSpace(stderr.String()), err)
	}
	return nil
}
