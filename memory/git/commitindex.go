package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The index a commit ralph makes on a branch is built in (a task's
// commit with --commit, a task's commit and its unfinished work in its
// worktree) is ralph's own: a new file for each commit, in a private
// directory of ralph's state directory (memory.RegistryDir), which no
// command can write in either sandbox (the default one hides it; the
// Landlock-only fallback grants writes to the project and the temporary
// directory only, and around ralph's state where the home lies in the
// temporary directory). It used to lie in the session's directory
// (.ralph/sessions/<id>/commit-index), which commands write in the
// fallback, and a worktree's commit was made from the worktree's own
// index, which commands write in both: a hook, or a command of another
// task running beside the commit, could stage there what no hook of the
// person's judged, and ralph committed it. Only ralph's git writes this
// index; the hooks get a copy (hooks.go), whose tree ralph takes back.

// commitIndex is ralph's own index file for one commit, and the private
// directory it lies in, which also holds the copies ralph reads the
// hooks' trees from.
type commitIndex struct {
	dir  string
	path string
	// beforeCommit, when set, runs once the hooks are done, just before
	// git commit moves the branch: CommitPaths records its intent there
	// (intent.go), when the tree to be committed is known.
	beforeCommit func(ctx context.Context) error
}

// commitIndexBase is where commit indexes are made; tests put it in a
// directory of their own.
var commitIndexBase = func() string { return filepath.Join(memory.RegistryDir(os.Getenv), "index") }

// staleCommitIndex is the age from which a commit's directory that a
// killed ralph left behind is removed: far beyond a commit's longest,
// its hooks' time limit (SlowTimeout) for each of them.
const staleCommitIndex = 24 * time.Hour

// newCommitIndex makes a new, empty private directory for a commit's
// index in ralph's state directory: a new name (mkdir, mode 0700, which
// follows no link at the name), so two commits never share one.
func newCommitIndex() (*commitIndex, error) {
	base := commitIndexBase()
	if err := rootfs.Person().MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("ralph's own index for the commit could not be made in its state directory: %w", err)
	}
	sweepCommitIndexes(base)
	dir, err := os.MkdirTemp(base, "commit-")
	if err != nil {
		return nil, fmt.Errorf("ralph's own index for the commit could not be made in its state directory: %w", err)
	}
	return &commitIndex{dir: dir, path: filepath.Join(dir, "index")}, nil
}

// sweepCommitIndexes removes the commit directories a killed ralph left
// in base, once they are older than staleCommitIndex.
func sweepCommitIndexes(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "commit-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleCommitIndex {
			_ = rootfs.Person().RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// env is the environment that hands git this index.
func (ix *commitIndex) env(more ...string) []string {
	return append([]string{"GIT_INDEX_FILE=" + ix.path}, more...)
}

// remove removes the index and its directory.
func (ix *commitIndex) remove() { _ = rootfs.Person().RemoveAll(ix.dir) }

// read reads the index whole, for the hooks' copy.
func (ix *commitIndex) read() ([]byte, error) { return readAdmin(ix.dir, "index") }

// seed fills the index with commit's tree (an empty index when commit is
// ""). withStat, in a work tree of its own (a task's worktree), first
// copies the work tree's index through the strict door, so that the
// entries whose content matches commit keep their stat data and git add
// need not read every file again; read-tree --reset takes nothing else of
// that copy, neither an entry nor a staged change. A work tree index
// that cannot be read or used leaves the index seeded from commit alone.
func (r *Repo) seed(ctx context.Context, ix *commitIndex, commit string, withStat bool) error {
	if commit == "" {
		_, err := r.Git(ctx, ix.env(), "read-tree", "--empty")
		return err
	}
	if withStat {
		if data, err := readAdmin(r.GitDir, "index"); err == nil {
			if err := writeNew(ix.path, data); err == nil {
				if _, err := r.Git(ctx, ix.env(), "read-tree", "--reset", commit); err == nil {
					return nil
				}
			}
		}
		_ = rootfs.Person().Remove(ix.path)
	}
	_, err := r.Git(ctx, ix.env(), "read-tree", commit)
	return err
}

// writeNew writes data to a new file at name in one of ralph's own
// private directories: O_EXCL, so nothing already there is written
// through.
func writeNew(name string, data []byte) error {
	f, err := rootfs.Person().OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// treeOf writes the index file data (a hook's copy, as the hook left it)
// to a new file of ix's directory and returns the tree git writes from
// it: what git would commit from that index. git refuses an index with
// unmerged entries or naming objects the repository lacks, as its own
// commit would.
func (r *Repo) treeOf(ctx context.Context, ix *commitIndex, data []byte) (string, error) {
	name := filepath.Join(ix.dir, "judged")
	person := rootfs.Person()
	_ = person.Remove(name)
	if err := writeNew(name, data); err != nil {
		return "", err
	}
	defer func() { _ = person.Remove(name) }()
	out, err := r.Git(ctx, []string{"GIT_INDEX_FILE=" + name}, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
