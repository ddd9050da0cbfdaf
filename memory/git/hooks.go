package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// The person's hooks on the commits ralph makes for them (--commit, a
// task's worktree) are the person's files, but they run the tree's code:
// a pre-commit of `exec make -s lint` runs the Makefile the model may
// have rewritten, the pre-commit framework the .pre-commit-config.yaml.
// ralph's git runs outside the sandbox with the person's rights, so git
// never runs a hook itself (core.hooksPath=/dev/null, and --no-verify
// where it applies): ralph runs the hooks that count as the person's
// (personHooks) through a HookRunner, which runs them in the sandbox the
// model's commands run in, as it runs a verify command.

// HookRunner runs the person's git hooks for the commits and worktrees
// ralph makes: in the sandbox (workers.Workspace), or as the person when
// they turned the sandbox off.
type HookRunner interface {
	// HookDir makes a new directory that the hooks RunHook runs may read
	// and write. The files git hands a hook (the index the commit is made
	// from, the message file) are copies there, since the sandbox may not
	// write where ralph keeps its own. The caller removes it.
	HookDir() (string, error)
	// RunHook runs the hook program at path with args, in dir, with env
	// added to the commands' environment and nothing on its standard
	// input. It returns what the hook wrote (standard output and error
	// together); the error says that the hook failed, or wraps
	// ErrHookNotRun when it could not run at all.
	RunHook(ctx context.Context, path string, args, env []string, dir string) (output string, err error)
}

// ErrHookNotRun is wrapped by a HookRunner's error when the hook could
// not run at all (no sandbox could be set up for it). The commit is then
// refused: a check that could not run is a failure.
var ErrHookNotRun = errors.New("the hook could not run in the sandbox")

// ErrNoHookRunner is wrapped by the error of a commit that has a hook of
// the person's to run and nothing to run it in: ralph never runs a hook
// outside the sandbox unless the person turned the sandbox off.
var ErrNoHookRunner = errors.New("ralph runs your git hooks only in the sandbox, and has none here")

// personHooks is the directory of the hooks that count as the person's
// for a commit or checkout in dir: "" when none do, because they lie
// where the model may write them (hooksOutsideWorkTree), or because the
// hooks path comes from configuration the model could have written (the
// guard takes hooks away).
func personHooks(ctx context.Context, dir string) string {
	if guardFor(ctx, dir).noHooks {
		return ""
	}
	return hooksOutsideWorkTree(ctx, dir)
}

// hookIn is the hook called name in the hooks directory dir, "" when
// there is none: git runs a hook only when its file is executable.
func hookIn(dir, name string) string {
	if dir == "" {
		return ""
	}
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return path
}

// commitHooks are the hooks of a commit, in the order git runs them, and
// the arguments each gets besides the message file.
var commitHooks = []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"}

// hookRun is one commit's hooks and the files they are handed.
type hookRun struct {
	r     *Repo
	ix    *commitIndex
	paths map[string]string // hook name → program
	dir   string            // the runner's directory for the files below
	door  *rootfs.Fs        // on dir, so no link a hook plants is followed
	env   []string
	// seen is the hooks' copy of the index as ralph last read it, and
	// tree the tree it holds: what is committed.
	seen []byte
	tree string
}

// What is committed is what the hooks judged. A hook gets a copy of
// ralph's own index (GIT_INDEX_FILE, in the temporary directory commands
// write), and may change it: a formatter re-stages what it rewrote, and
// the model's Makefile, run by `make lint`, can `git rm --cached` the file
// a secret scanner after it would have refused. git itself reads its
// index again after pre-commit and commits what that hook left, so ralph
// does the same: it reads the copy back through the door (no link, no
// FIFO, nothing but a regular file), has git write its tree (which fails
// on unmerged entries or missing objects, as git's commit would), and
// commits that tree. git builds the tree before prepare-commit-msg and
// commit-msg run, so a change those make to the index is in no commit of
// the person's git, and the hooks would not all have judged what is
// committed: ralph refuses the commit. Comparing trees, rather than
// handing the hooks ralph's own index read-only, keeps the hooks that
// write their index working (git status refreshes it, a formatter
// re-stages), and needs nothing of the sandbox but what it already does.

// commit makes the commit of ralph's own index ix with message, env
// adding to git's environment (the identity), running the person's hooks
// around it as git would: pre-commit, prepare-commit-msg and commit-msg
// before (one that fails refuses the commit), post-commit after (its
// failure is only told). What the pre-commit hook left in its copy of the
// index is what is committed; it returns the paths that hook changed.
func (r *Repo) commit(ctx context.Context, ix *commitIndex, env []string, message string) ([]string, error) {
	h, err := r.commitHooks(ctx, ix, message)
	if err != nil {
		return nil, err
	}
	var changed []string
	if h != nil {
		defer h.close()
		if err := h.run(ctx, "pre-commit"); err != nil {
			return nil, err
		}
		if changed, err = h.judge(ctx, "pre-commit"); err != nil {
			return nil, err
		}
		if err := h.run(ctx, "prepare-commit-msg", h.msgFile(), "message"); err != nil {
			return nil, err
		}
		if _, err := h.judge(ctx, "prepare-commit-msg"); err != nil {
			return nil, err
		}
		if err := h.run(ctx, "commit-msg", h.msgFile()); err != nil {
			return nil, err
		}
		if _, err := h.judge(ctx, "commit-msg"); err != nil {
			return nil, err
		}
		if message, err = h.message(message); err != nil {
			return nil, err
		}
		if len(changed) > 0 {
			if same, err := r.indexMatches(ctx, ix.env(), r.HeadNow(ctx)); err != nil {
				return nil, fmt.Errorf("commit: %w", err)
			} else if same {
				return nil, errors.New("commit: your pre-commit hook unstaged every change ralph staged, so there was nothing to commit")
			}
		}
	}
	if ix.beforeCommit != nil {
		if err := ix.beforeCommit(ctx); err != nil {
			return nil, err
		}
	}
	// git runs no hook itself: --no-verify besides core.hooksPath=/dev/null.
	if _, err := runCmd(ctx, SlowTimeout, false, r.Top, ix.env(env...), []byte(message), "commit", "-q", "--no-verify", "--cleanup=whitespace", "-F", "-"); err != nil {
		return nil, err
	}
	if h != nil {
		if err := h.run(ctx, "post-commit"); err != nil {
			var ce *CommandError
			if errors.As(err, &ce) {
				err = fmt.Errorf("your post-commit hook failed (%w): %s", ce.Err, text.Clip(ce.Stderr, 500))
			}
			r.warn(fmt.Sprintf("ralph's commit was made, but %s", err))
		}
	}
	return changed, nil
}

// judge reads back the index the hook called name was handed, once it
// has run (see above). After pre-commit, ralph's own index takes the tree
// the copy holds, and judge returns the paths that changed; after a later
// hook, a changed tree refuses the commit.
func (h *hookRun) judge(ctx context.Context, name string) ([]string, error) {
	if h.paths[name] == "" {
		return nil, nil
	}
	data, err := h.door.ReadRegular(filepath.Join(h.dir, "index"), maxAdminFile)
	if err != nil {
		return nil, fmt.Errorf("commit: the index your %s hook was handed is no file ralph can read (%w), so the commit was not made", name, err)
	}
	if bytes.Equal(data, h.seen) {
		return nil, nil
	}
	tree, err := h.r.treeOf(ctx, h.ix, data)
	if err != nil {
		return nil, fmt.Errorf("commit: the index your %s hook left holds nothing git could commit, so the commit was not made: %w", name, err)
	}
	h.seen = data
	if tree == h.tree {
		return nil, nil
	}
	if name != "pre-commit" {
		return nil, fmt.Errorf("commit: your %s hook changed what is staged in the index it was handed, which git would not commit and your other hooks did not judge, so the commit was not made", name)
	}
	out, err := h.r.Git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", h.tree, tree)
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	if _, err := h.r.Git(ctx, h.ix.env(), "read-tree", tree); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	h.tree = tree
	changed := splitNul(out)
	h.r.warn(fmt.Sprintf("your pre-commit hook changed what ralph staged (%s): ralph commits what it left, as git does", text.Clip(text.StripControls(strings.Join(changed, ", ")), 300)))
	return changed, nil
}

// commitHooks finds the person's commit hooks and hands them their
// files: nil when there are none.
func (r *Repo) commitHooks(ctx context.Context, ix *commitIndex, message string) (*hookRun, error) {
	dir := personHooks(ctx, r.Top)
	h := &hookRun{r: r, ix: ix, paths: map[string]string{}}
	for _, name := range commitHooks {
		if p := hookIn(dir, name); p != "" {
			h.paths[name] = p
		}
	}
	if len(h.paths) == 0 {
		return nil, nil
	}
	if r.Hooks == nil {
		return nil, fmt.Errorf("commit: %w, so the commit was not made", ErrNoHookRunner)
	}
	// The tree of ralph's own index, which the hooks' copy holds until a
	// hook changes it.
	tree, err := r.Git(ctx, ix.env(), "write-tree")
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	h.tree = strings.TrimSpace(string(tree))
	if h.dir, err = r.Hooks.HookDir(); err != nil {
		return nil, fmt.Errorf("commit: the directory for your hooks' files could not be made, so the commit was not made: %w", err)
	}
	if h.door, err = rootfs.New(h.dir); err != nil {
		h.close()
		return nil, fmt.Errorf("commit: %w", err)
	}
	index, err := ix.read()
	if err == nil {
		err = h.write("index", index)
	}
	if err == nil {
		err = h.write("COMMIT_EDITMSG", []byte(message))
	}
	if err != nil {
		h.close()
		return nil, fmt.Errorf("commit: the files for your hooks could not be written, so the commit was not made: %w", err)
	}
	h.seen = index
	// What git gives a commit's hooks: the index the commit is made from
	// (a copy, whose tree ralph takes back: see judge), the repository,
	// and no editor.
	h.env = []string{"GIT_INDEX_FILE=" + filepath.Join(h.dir, "index"), "GIT_DIR=" + r.GitDir, "GIT_EDITOR=:", "GIT_PREFIX="}
	return h, nil
}

// write writes a new file of the hooks' through the door.
func (h *hookRun) write(name string, data []byte) error {
	f, err := h.door.CreateNew(filepath.Join(h.dir, name), 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

func (h *hookRun) msgFile() string { return filepath.Join(h.dir, "COMMIT_EDITMSG") }

// message is the message as prepare-commit-msg and commit-msg left it,
// read through the door: a hook in the sandbox may have put a link to a
// secret at its name, which is never followed. It is the message given
// when neither hook ran.
func (h *hookRun) message(given string) (string, error) {
	if h.paths["prepare-commit-msg"] == "" && h.paths["commit-msg"] == "" {
		return given, nil
	}
	data, err := h.door.ReadRegular(h.msgFile(), 1<<20)
	if err != nil {
		return "", fmt.Errorf("commit: the message your hooks left could not be read, so the commit was not made: %w", err)
	}
	return string(data), nil
}

// run runs the hook called name, if the person has it, in the work
// tree's top as git does. A hook that fails refuses the commit with its
// output, as git's commit does.
func (h *hookRun) run(ctx context.Context, name string, args ...string) error {
	path := h.paths[name]
	if path == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, SlowTimeout)
	defer cancel()
	out, err := h.r.Hooks.RunHook(ctx, path, args, h.env, h.r.Top)
	return hookError(name, out, err)
}

// hookError is a hook's failure as a refused commit: a *CommandError
// whose Stderr holds what the hook said, so that the task loop shows it.
func hookError(name, out string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrHookNotRun):
		return fmt.Errorf("commit: your %s hook did not run, so the commit was not made: %w", name, err)
	}
	return &CommandError{Command: "commit", Message: fmt.Sprintf("your %s hook refused it", name), Stderr: strings.TrimSpace(out), Err: err}
}

// close removes the hooks' directory, through the person's door, which
// follows no link a hook planted in it.
func (h *hookRun) close() {
	if h.door != nil {
		_ = h.door.Close()
	}
	if h.dir != "" {
		_ = rootfs.Person().RemoveAll(h.dir)
	}
}

// PostCheckout runs the person's post-checkout hook for the linked work
// tree r that AddWorktree made, as `git worktree add` would have: in the
// tree's top, from no commit to its HEAD. A hook that fails fails the
// checkout, as git's does; the tree stays.
func (r *Repo) PostCheckout(ctx context.Context) error {
	path := hookIn(personHooks(ctx, r.Top), "post-checkout")
	if path == "" {
		return nil
	}
	if r.Hooks == nil {
		return fmt.Errorf("worktree: %w, so the worktree's post-checkout hook did not run", ErrNoHookRunner)
	}
	head := r.HeadNow(ctx)
	ctx, cancel := context.WithTimeout(ctx, SlowTimeout)
	defer cancel()
	out, err := r.Hooks.RunHook(ctx, path, []string{strings.Repeat("0", len(head)), head, "1"}, []string{"GIT_PREFIX="}, r.Top)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrHookNotRun):
		return fmt.Errorf("worktree %s: your post-checkout hook did not run: %w", r.Top, err)
	}
	return &CommandError{Command: "worktree", Message: "your post-checkout hook failed in " + r.Top, Stderr: strings.TrimSpace(out), Err: err}
}

// warn tells the person something about the repository, where the
// session gave a way to (Guard).
func (r *Repo) warn(msg string) {
	if p := pinFor(r.Top); p != nil && p.warn != nil {
		p.warn(msg)
	}
}
