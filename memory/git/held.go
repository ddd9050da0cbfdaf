package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// A task loop's checkpoints leave its own files out (RecordExcept): the
// task file and the progress file. They stay in ralph's index as the run
// began, so every status against that index found the task file's stat
// changed and read and hashed it whole, only for the checkpoint to drop
// it again: 400 KB a task on a plan of ten thousand tasks, about a
// millisecond of git's time each. While the same paths are left out
// checkpoint after checkpoint, ralph's index marks them assume-unchanged
// instead, and git's status does not look at them at all.
//
// The marks must never outlive the checkpoints that want them: a later
// checkpoint that takes the task file in (a chat on the same session)
// would not see it change. So the paths held are listed in a file beside
// the index (heldSuffix) before they are marked, and removed from it only
// once the marks are cleared; a process that finds the list (its
// predecessor was killed with the marks on) clears them before its first
// status.

// heldSuffix names the list, beside ralph's index, of the paths marked
// assume-unchanged in it.
const heldSuffix = ".held"

// unknownHeld stands for a list that could not be read: every mark in
// the index is cleared.
var unknownHeld = []string{"\x00unknown"}

// syncHeld makes the assume-unchanged marks of ralph's index match
// except: the paths left out of this checkpoint when it leaves any out,
// none otherwise. It runs git only when the set changes. An error leaves
// the checkpoint unable to trust its status, so it fails.
func (c *Checkpoints) syncHeld(ctx context.Context, env, except []string) error {
	if !c.heldRead {
		held, err := c.readHeld()
		if err != nil {
			return err
		}
		c.held, c.heldRead = held, true
	}
	want := slices.Compact(slices.Sorted(slices.Values(except)))
	// Marks on paths this checkpoint leaves out anyway do no harm, so a
	// set that grows or shrinks by paths still left out (a task's
	// checkpoint and a model step's may name a few more) runs no git.
	if len(c.held) > 0 && isSubset(c.held, want) || len(c.held) == 0 && len(want) == 0 {
		return nil
	}
	if len(c.held) > 0 {
		if err := c.markHeld(ctx, env, c.held, "--no-assume-unchanged"); err != nil {
			return err
		}
		if err := c.own.Remove(c.index + heldSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoint: %w", err)
		}
		c.held = nil
	}
	if len(want) == 0 {
		return nil
	}
	if err := c.writeHeld(want); err != nil {
		return err
	}
	c.held = want
	return c.markHeld(ctx, env, want, "--assume-unchanged")
}

// isSubset reports whether every path of a is in b.
func isSubset(a, b []string) bool {
	for _, p := range a {
		if !slices.Contains(b, p) {
			return false
		}
	}
	return true
}

// dropHeld forgets the marks once ralph's index was made anew (seeded):
// the new one has none of ralph's. A list left beside it names paths
// the next syncHeld after a restart clears, which does no harm where
// nothing is marked.
func (c *Checkpoints) dropHeld() { c.held = nil }

// markHeld sets or clears (flag) the assume-unchanged mark of each of
// paths that ralph's index holds: git refuses the whole list for one
// path it does not have. The list unknownHeld clears every mark there
// is.
func (c *Checkpoints) markHeld(ctx context.Context, env, paths []string, flag string) error {
	if err := c.catchUp(ctx, env); err != nil {
		return err
	}
	args := append([]string{"ls-files", "-z", "--"}, literal(paths)...)
	all := slices.Equal(paths, unknownHeld)
	skips := false
	if all {
		// "-v" tags an entry marked assume-unchanged with a lower-case
		// letter, and one marked skip-worktree with S (s with both).
		args = []string{"ls-files", "-v", "-z"}
		// Clearing every mark clears skip-worktree too, which a copy
		// of the person's index may carry (seedIndex), except where a
		// sparse checkout set it: there a file it marks is not on disk.
		skips = flag == "--no-assume-unchanged" && !c.sparse(ctx)
	}
	out, err := c.repo.GitSized(ctx, env, args...)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var tracked, skipped bytes.Buffer
	for _, p := range bytes.Split(out, []byte{0}) {
		switch {
		case len(p) == 0:
			continue
		case all:
			if len(p) < 3 || p[1] != ' ' {
				continue
			}
			tag := p[0]
			p = p[2:]
			if skips && (tag == 'S' || tag == 's') {
				skipped.Write(p)
				skipped.WriteByte(0)
			}
			if tag < 'a' || tag > 'z' {
				continue
			}
		case !slices.Contains(paths, string(p)):
			continue
		}
		tracked.Write(p)
		tracked.WriteByte(0)
	}
	// update-index sets one kind of mark a run.
	for _, run := range []struct {
		paths *bytes.Buffer
		flag  string
	}{{&tracked, flag}, {&skipped, "--no-skip-worktree"}} {
		if run.paths.Len() == 0 {
			continue
		}
		// This write of the index falls between two statuses, and git's
		// untracked cache can then miss a file made between the first
		// status and this write: with git alone (2.39, ext4), status, a
		// new file, update-index and status again missed the file in 3 of
		// 600 trials, and never in 800 without the update-index between.
		// git trusts a directory's cached listing once the index is newer
		// than the time it recorded, and this write makes the index
		// newer. So the next status lists the directories again (one run
		// of TestRunCheckpointsEachTaskForDiffAndUndo in a hundred lost a
		// task's file from its checkpoint, and undo of the next task
		// removed it).
		c.uncached = true
		if err := c.feed(ctx, env, run.paths.Bytes(), scaled(0, len(paths)), nil, c.writing("update-index", run.flag, "-z", "--stdin")...); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	return nil
}

// readHeld reads the list of held paths a previous process left; none
// when there is no list. A link or anything but a regular file at its
// name is removed, never followed (it lies beside the index, where
// commands may write).
func (c *Checkpoints) readHeld() ([]string, error) {
	name := c.index + heldSuffix
	fi, err := lstat(c.own, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		// Whatever was marked, the list is gone: the status then runs
		// with the marks; clearing them all is the safe course.
		_ = c.own.Remove(name)
		return unknownHeld, nil
	}
	f, err := c.own.Open(name)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var held []string
	for _, p := range bytes.Split(data, []byte{0}) {
		if len(p) > 0 {
			held = append(held, string(p))
		}
	}
	return held, nil
}

// writeHeld writes the list of paths about to be marked, whole or not at
// all (a new file renamed into place; a link at either name is replaced,
// never followed).
func (c *Checkpoints) writeHeld(paths []string) error {
	name := c.index + heldSuffix
	tmp := name + ".tmp"
	_ = c.own.Remove(tmp)
	f, err := c.own.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, err = f.Write([]byte(strings.Join(paths, "\x00") + "\x00"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.own.Rename(tmp, name)
	}
	if err != nil {
		_ = c.own.Remove(tmp)
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// sparse reports whether the repository checks out sparsely
// (core.sparseCheckout), whose skip-worktree marks say a file is not on
// disk by design; a configuration ralph cannot read counts as sparse,
// which keeps the marks as git has them.
func (c *Checkpoints) sparse(ctx context.Context) bool {
	if !configMayName(c.repo.common(), c.repo.GitDir, "sparsecheckout") {
		return false
	}
	out, err := c.repo.Git(ctx, nil, "config", "--type=bool", "--default=false", "core.sparseCheckout")
	return err != nil || strings.TrimSpace(string(out)) != "false"
}
