package git

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ralph's index follows the checkpoints, so that a status against it
// lists what changed since the latest one. The quick checkpoint
// (treewrite.go) builds its tree without it, and bringing the index up
// after each one was an update-index that read and wrote the whole index:
// a process a task, whose cost grew with the tree (at 3,000 files the
// index is 220 KB, read, checked and written again for one new entry).
// So a quick checkpoint only notes the entries it changed (behind), and
// the index catches up, in one update-index, when something reads it: a
// checkpoint that goes through git's index, the assume-unchanged marks
// (held.go), the baseline's look (HeadIsExact), or once maxBehind paths
// wait. The entries are set as the checkpoint recorded them
// (--index-info), never read from the work tree again: a file a command
// changed since must still show as changed to the status that follows.
//
// A process that ends with entries behind leaves an index that lags its
// latest checkpoint. The next process's first checkpoint is unsure (see
// NewCheckpoints): it looks at the whole tree and diffs the tree it
// writes against that checkpoint, which takes in whatever the lag hides.

// maxBehind is how many paths may wait for ralph's index before a quick
// checkpoint brings it up: one update-index per that many tasks, and a
// bound on the memory the waiting entries hold.
const maxBehind = 1024

// behindEntry is a path's entry as the latest quick checkpoint recorded
// it; mode "" when the checkpoint removed it.
type behindEntry struct {
	mode string
	id   [20]byte
}

// entriesOf are the entries a quick checkpoint records for the files it
// found: what ralph's index is to hold once the checkpoint is written.
func entriesOf(found []*quickFile) map[string]behindEntry {
	out := make(map[string]behindEntry, len(found))
	for _, f := range found {
		e := behindEntry{}
		if !f.gone {
			e = behindEntry{mode: f.mode, id: f.id}
		}
		out[f.path] = e
	}
	return out
}

// fallBehind notes the entries of a quick checkpoint just written, for
// catchUp.
func (c *Checkpoints) fallBehind(entries map[string]behindEntry) {
	if c.behind == nil {
		c.behind = map[string]behindEntry{}
	}
	maps.Copy(c.behind, entries)
}

// catchUp brings ralph's index (env's) up to the quick checkpoints
// recorded since it was last written. The entries are dropped whatever
// happens: after a failure the checkpoint that called fails, and the
// next one, unsure, looks at the whole tree.
func (c *Checkpoints) catchUp(ctx context.Context, env []string) error {
	if len(c.behind) == 0 {
		return nil
	}
	paths := slices.Sorted(maps.Keys(c.behind))
	var info bytes.Buffer
	// Removals first: a file removed where a later file needs its name
	// for a directory.
	for _, p := range paths {
		if c.behind[p].mode == "" {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), p)
		}
	}
	for _, p := range paths {
		if e := c.behind[p]; e.mode != "" {
			fmt.Fprintf(&info, "%s %x\t%s\x00", e.mode, e.id, p)
		}
	}
	c.behind = nil
	// A write of the index between two statuses: see markHeld.
	c.uncached = true
	if err := c.feed(ctx, env, info.Bytes(), scaled(0, len(paths)), nil, c.writing("update-index", "-z", "--index-info")...); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
