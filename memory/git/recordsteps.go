package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The steps of Checkpoints.record, each under mu, in the order it takes
// them: the index made ready, the changes taken into it, the tree and its
// changes read from it, and the commit written.

// readyIndex makes ralph's own index safe and ready for checkpoint name:
// no stale lock, no link in its place or in the refs it writes, and the
// previous checkpoint in it.
func (c *Checkpoints) readyIndex(name string) error {
	// A lock on ralph's own index is always stale here: its checkpoints
	// are taken one at a time (mu), and the project's lock keeps every
	// other ralph out. A git killed at its time limit leaves one behind,
	// and every later checkpoint of the session failed on it.
	_ = c.own.Remove(c.index + ".lock")
	// Nor is the index itself anything but ralph's own file (see
	// indexfile.go).
	if err := c.ownIndex(c.index); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// Nothing is written through a directory a command swapped for a
	// symlink (see refguard.go).
	if err := guardRepo(c.repo.common(), c.session, true, name, name+rawSuffix); err != nil {
		return err
	}
	// Nor is the person's index a link a command planted (gitdoor.go):
	// ralph's git reads it too.
	c.asideIndex()
	if err := c.seedIndex(); err != nil {
		return err
	}
	c.decideSplit()
	return nil
}

// takeRepairing is take, once more on an index seeded again when the
// first try found the index's shared part gone.
func (c *Checkpoints) takeRepairing(ctx context.Context, env []string, only, except []string, beside func()) (changed, skipped []string, err error) {
	changed, skipped, err = c.take(ctx, env, only, except, beside)
	if err != nil && c.repairIndex() {
		// The index's shared part was gone; seeded again, it works.
		if err = c.seedIndex(); err == nil {
			c.decideSplit()
			changed, skipped, err = c.take(ctx, env, only, except, beside)
		}
	}
	return changed, skipped, err
}

// treeAndNumstat writes the index's tree and reads what changed since
// parent, the paths of except left out: both from the index as add left
// it, side by side. An undo's expected numstat (exp) stands in for the
// diff when its tree is the one written.
func (c *Checkpoints) treeAndNumstat(ctx context.Context, env []string, parent string, except []string, exp *expected) (treeID string, numstat []byte, err error) {
	var tree []byte
	var diffErr, treeErr error
	var wg sync.WaitGroup
	diff := func() {
		numstat, diffErr = c.repo.GitSized(ctx, exceptEnv(env, except), exceptArgs(parent, except)...)
	}
	if parent != "" && exp == nil {
		wg.Go(diff)
	}
	tree, treeErr = c.repo.GitSized(ctx, env, c.writing("write-tree")...)
	wg.Wait()
	treeID = strings.TrimSpace(string(tree))
	if exp != nil && treeErr == nil {
		<-exp.done
		if exp.err == nil && exp.tree == treeID {
			numstat = exp.numstat
		} else {
			diff()
		}
	}
	if err := errors.Join(diffErr, treeErr); err != nil {
		return "", nil, fmt.Errorf("checkpoint: %w", err)
	}
	return treeID, numstat, nil
}

// commitCheckpoint writes cp's commit of treeID, with the raw changes
// kept beside it named in its message, and makes it the last checkpoint.
// The writers (*w) write it when there is no store; they are used up
// then, so *w is nil after, for the caller's abort to leave them be.
func (c *Checkpoints) commitCheckpoint(ctx context.Context, env []string, cp *Checkpoint, message, treeID string, changed []string, baseline bool, w **writers) error {
	raw, err := c.keepRaw(ctx, env, changed, baseline, cp.Ref+rawSuffix)
	if err != nil {
		return err
	}
	if raw != "" {
		message = strings.TrimRight(message, "\n") + "\n\n" + rawTrailer + raw
	}
	body := commitBody(treeID, cp.Parent, message, time.Now())
	if c.store != nil {
		cp.Commit, err = c.storeCommit(ctx, body, cp.Ref)
	} else {
		cp.Commit, err = (*w).write(body, cp.Ref)
		*w = nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.last, c.lastTree = cp.Commit, treeID
	c.rawPrev, c.rawKnown = raw, true
	if c.recorded++; c.recorded%c.packEvery == 0 {
		c.pack(false)
	}
	return nil
}
