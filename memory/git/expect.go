package git

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
)

// An undo knows, before it writes a file, what its checkpoint will hold:
// the latest checkpoint's tree with the files it restores as the earlier
// commits have them. Counting the lines of each changed file (the
// checkpoint's numstat) reads both versions of every file, which on an
// undo of ten thousand files was a third of a second after the last write,
// with the second core idle while undo's writes waited on the file
// system. So the undo has git build that tree and count its lines beside
// the writes (Expect), and the checkpoint after them takes the count only
// when the tree it has just written from the work tree is that very tree:
// the same tree against the same checkpoint is the same numstat, whatever
// the restore did. Anything else (a file written back otherwise, one the
// person changed meanwhile) has the checkpoint count as it always did.

// Restoration names the paths (relative to the top) a restore puts back
// as commit has them: with commit's content and mode, or removed when
// commit lacks them.
type Restoration struct {
	Commit string
	Paths  []string
	// Undone are, by path, the counts of the one change a path's
	// restore takes back, when the undo knows them (one checkpoint
	// changed the path, and nothing since): reversed, they count a file
	// the restore adds or removes whole without reading it (see
	// restorequick.go).
	Undone map[string]FileChange
}

// expectFrom is the fewest files worth an expectation: the three git
// processes that build the tree cost about what counting a thousand
// files' lines after the writes does, and a small restore's writes are
// over before they are. A variable, so that tests can expect of a few.
var expectFrom = 1000

// expected is what the next checkpoint will hold if the restores go as
// planned: its tree, and its numstat against from. done closes when both
// are known (or err is).
type expected struct {
	from    string
	done    chan struct{}
	tree    string
	numstat []byte
	err     error
	// restored is what a quick restore wrote (restorequick.go), for
	// the checkpoint to take by name; nil for a prediction.
	restored *restored
	// proven says the restore went the quick way on Unchanged's word,
	// while ralph's index was unsure.
	proven bool
}

// Expect has git work out, beside the restores, the tree the next
// checkpoint will have if they go as planned and its numstat against the
// latest checkpoint (from); the next Record uses them when its tree turns
// out the same (see above). A later Expect replaces an earlier one. The
// work runs on a scratch index beside the session's, never on the
// session's own.
func (c *Checkpoints) Expect(ctx context.Context, from string, rs []Restoration) {
	n := 0
	for _, r := range rs {
		for _, p := range r.Paths {
			// A restored .gitattributes changes how the other files
			// count while it is being written: the checkpoint counts
			// after the writes, as ever.
			if strings.EqualFold(path.Base(p), ".gitattributes") {
				return
			}
		}
		n += len(r.Paths)
	}
	if n < expectFrom || from == "" {
		return
	}
	e := &expected{from: from, done: make(chan struct{})}
	c.mu.Lock()
	c.expect = e
	c.mu.Unlock()
	go func() {
		defer close(e.done)
		e.tree, e.numstat, e.err = c.predict(ctx, from, rs)
	}()
}

// takeExpected is the expectation for a checkpoint against parent, if the
// last Expect was made against it; the next checkpoint takes it, whatever
// its parent. Under mu.
func (c *Checkpoints) takeExpected(parent string) *expected {
	e := c.expect
	c.expect = nil
	if e == nil || e.from != parent || parent == "" {
		return nil
	}
	return e
}

// predict builds the expected tree in a scratch index (the tree of from,
// with each restoration's paths set as its commit has them) and counts
// its lines against from, as the checkpoint's own diff would. Submodules
// stay as from has them: a restore writes no gitlink.
func (c *Checkpoints) predict(ctx context.Context, from string, rs []Restoration) (tree string, numstat []byte, err error) {
	scratch := c.index + ".expect"
	// A link a command put at the name is removed, never followed (the
	// warning is the session index's, told by the checkpoint).
	if _, err := ownIndex(c.own, scratch); err != nil {
		return "", nil, err
	}
	_ = c.own.Remove(scratch)
	defer c.own.Remove(scratch)
	// Never split, whatever the person's core.splitIndex: a scratch
	// index leaves no shared part behind in .git.
	env := []string{"GIT_INDEX_FILE=" + scratch}
	noSplit := []string{"-c", "core.splitIndex=false"}
	if _, err := c.repo.GitSized(ctx, env, append(noSplit, "read-tree", from)...); err != nil {
		return "", nil, err
	}
	var info bytes.Buffer
	n := 0
	for _, r := range rs {
		wanted := make(map[string]bool, len(r.Paths))
		for _, p := range r.Paths {
			wanted[p] = true
		}
		entries, err := c.repo.listTree(ctx, r.Commit, wanted)
		if err != nil {
			return "", nil, err
		}
		for _, p := range r.Paths {
			e, ok := entries[p]
			switch {
			case !ok:
				// Removed: mode 0 takes the path out of the index.
				fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", len(from)), p)
			case e.mode == "160000":
				continue
			default:
				fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.object, p)
			}
			n++
		}
	}
	if _, err := runCmd(ctx, scaled(0, n), false, c.repo.Top, env, info.Bytes(), append(noSplit, "update-index", "-z", "--index-info")...); err != nil {
		return "", nil, err
	}
	out, err := c.repo.GitSized(ctx, env, append(noSplit, "write-tree")...)
	if err != nil {
		return "", nil, err
	}
	tree = strings.TrimSpace(string(out))
	// The checkpoint's own diff is exceptArgs' (the index against from);
	// the same porcelain between from and the tree reads the same
	// configuration, and the scratch index, which holds no file's stat,
	// has git read the blobs rather than the files being written.
	numstat, err = c.repo.GitSized(ctx, env, "diff", "--numstat", "-z", "--no-renames", from, tree)
	if err != nil {
		return "", nil, err
	}
	return tree, numstat, nil
}
