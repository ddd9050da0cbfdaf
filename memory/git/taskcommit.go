package git

import (
	"bytes"
	"context"
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
// o.Leave's) on the checked-out branch, with the work tree's own index.
// It returns the commit, or "" when nothing changed.
func (r *Repo) CommitWork(ctx context.Context, message string, o WorkCommit) (string, error) {
	var env []string
	if o.AsRalph {
		env = identity
	}
	if err := r.addWork(ctx, env, o.Only); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	head := r.HeadNow(ctx)
	if len(o.Leave) > 0 {
		// Back to HEAD's version in the index; the work tree keeps the
		// change. Before the first commit there is no HEAD to go back
		// to, and the paths leave the index.
		args := append([]string{"reset", "-q", head, "--"}, o.Leave...)
		if head == "" {
			args = append([]string{"rm", "-q", "--cached", "--ignore-unmatch", "--"}, o.Leave...)
		}
		if _, err := r.Git(ctx, append(env, "GIT_LITERAL_PATHSPECS=1"), args...); err != nil {
			return "", fmt.Errorf("commit: %w", err)
		}
	}
	if same, err := r.indexMatches(ctx, nil, head); err != nil || same {
		return "", err
	}
	if o.NoHooks {
		// git runs no hook itself: --no-verify besides core.hooksPath=/dev/null.
		if _, err := runCmd(ctx, SlowTimeout, false, r.Top, env, []byte(message), "commit", "-q", "--no-verify", "--cleanup=whitespace", "-F", "-"); err != nil {
			return "", err
		}
	} else {
		read := func() ([]byte, error) { return readAdmin(r.GitDir, "index") }
		if err := r.commit(ctx, env, read, message); err != nil {
			return "", err
		}
	}
	return r.HeadNow(ctx), nil
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
	if err := cmd.Run(); err != nil {
		return commandError(ctx, SlowTimeout, args, strings.TrimSpace(stderr.String()), err)
	}
	return nil
}
