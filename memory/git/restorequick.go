package git

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
)

// An undo of 10,000 files once cost four times what git checkout takes
// to put them back (issue 94): ls-tree of every commit it restored from
// (twice), five processes to predict its checkpoint, and after the writes
// a checkpoint that found the restored files again the long way, with a
// status walking the whole tree and an add hashing each file. The undo
// knows what it writes. So Checkpoints.Restore diffs the checkpoint the
// undo starts from against each commit it restores from, once, writes
// only the files that differ (through the same write-back, which follows
// no link), counts their lines beside the writes, and tells the next
// checkpoint which paths it wrote: that checkpoint updates ralph's index
// for those paths alone and writes its tree (recordRestored). Where git
// may convert a file's bytes, or a restore needs a raw tree or a
// submodule, the undo goes the way it always went (Repo.Restore, and a
// checkpoint that looks at the whole tree).

// restoredFile is a path a quick restore wrote or removed: as the
// restoration's commit has it (mode, object), or gone; fresh when the
// checkpoint the restore started from did not have it.
type restoredFile struct {
	path         string
	gone, fresh  bool
	mode, object string
	size         int64
}

// restored is what a quick restore did, for the checkpoint after it:
// the paths it changed, and their lines counted (a FileChange each, for
// the paths counted).
type restored struct {
	files  []restoredFile
	counts map[string]FileChange
}

// Restore puts the paths of rs back as their commits have them, on top
// of the latest checkpoint, from (the work tree's state as the undo
// found it), calling wrote after each restoration is written; the next
// checkpoint records the result. The writes are Repo.Restore's. A
// restoration's Undone, when given, are the counts of the one change
// each path's restore takes back.
func (c *Checkpoints) Restore(ctx context.Context, from string, rs []Restoration, wrote func(Restoration)) error {
	if !c.quickRestoreOK(ctx, from, rs) {
		c.Expect(ctx, from, rs)
		for _, r := range rs {
			if err := c.repo.Restore(ctx, r.Commit, r.Paths); err != nil {
				return err
			}
			wrote(r)
		}
		return nil
	}
	done := &restored{counts: map[string]FileChange{}}
	quick := true
	// Another diff algorithm than git's default may count a change and
	// its reverse apart (see reversible).
	myers := !configMayName(c.repo.common(), c.repo.GitDir, "algorithm")
	for _, r := range rs {
		files, counts, err := c.restoreChanged(ctx, from, r, myers)
		if errors.Is(err, errNotQuick) {
			// Nothing of it was written: the long way writes it, and
			// the checkpoint looks at the whole tree.
			quick = false
			err = c.repo.Restore(ctx, r.Commit, r.Paths)
		}
		if err != nil {
			return err
		}
		done.files = append(done.files, files...)
		maps.Copy(done.counts, counts)
		wrote(r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expect = nil
	if quick {
		e := &expected{from: from, done: make(chan struct{}), restored: done, proven: c.unsure}
		close(e.done)
		c.expect = e
	}
	return nil
}

// quickRestoreOK reports whether a restore of rs on top of from can go
// the quick way: from is the latest checkpoint, which the work tree is
// known to hold, ralph writes commits itself, git converts no file's
// bytes here, no restoration's commit has a raw tree, and no path is a
// .gitattributes (which changes how the others convert) or one a batch
// line cannot name.
func (c *Checkpoints) quickRestoreOK(ctx context.Context, from string, rs []Restoration) bool {
	if from == "" || c.store == nil {
		return false
	}
	// After a checkpoint that failed, from may not be what the work tree
	// holds, and a file the two commits agree on may still need writing.
	// Unchanged may vouch for the paths instead.
	c.mu.Lock()
	unsure := (c.unsure && !c.proven.covers(from, rs)) || c.last != from
	converts := !unsure && c.mayConvert(ctx)
	c.mu.Unlock()
	if unsure || converts {
		return false
	}
	for _, r := range rs {
		for _, p := range r.Paths {
			if strings.EqualFold(path.Base(p), ".gitattributes") || strings.ContainsAny(p, "\n\r") {
				return false
			}
		}
		if len(r.Paths) > 0 && c.repo.rawTreeOf(ctx, r.Commit) != "" {
			return false
		}
	}
	return true
}

// restoreChanged writes the paths of rs that differ between from and
// rs.Commit, as rs.Commit has them (writeBack's way, without listing
// either tree whole), and returns them, with the lines of each counted:
// from rs.Undone where it has them and their reverse is sure (see
// reversible; myers says git diffs with its default algorithm), the
// others by git beside the writes. errNotQuick, before anything is
// written, says a submodule is among them.
func (c *Checkpoints) restoreChanged(ctx context.Context, from string, rs Restoration, myers bool) ([]restoredFile, map[string]FileChange, error) {
	wanted := make(map[string]bool, len(rs.Paths))
	for _, p := range rs.Paths {
		if !safePath(p) {
			return nil, nil, fmt.Errorf("restore: %q: %w; nothing was restored", p, ErrUnsafePath)
		}
		wanted[p] = true
	}
	if len(wanted) == 0 {
		return nil, nil, nil
	}
	changes, err := c.changedPaths(ctx, from, rs.Commit, wanted)
	if err != nil {
		return nil, nil, err
	}
	tree := map[string]treeEntry{}
	var files []restoredFile
	var paths, count []string
	counts := map[string]FileChange{}
	for _, ch := range changes {
		if ch.srcMode == "160000" || ch.dstMode == "160000" {
			return nil, nil, errNotQuick
		}
		f := restoredFile{path: ch.path, gone: ch.dstMode == nullMode, fresh: ch.srcMode == nullMode}
		u, known := rs.Undone[f.path]
		if !f.gone {
			f.mode, f.object = ch.dstMode, ch.dstObject
			// A change that only added lines may have appended them:
			// the restore tries cutting the file short (grown).
			grown := known && !f.fresh && ch.srcMode == ch.dstMode && !u.Binary && u.Added > 0 && u.Deleted == 0
			tree[f.path] = treeEntry{mode: f.mode, object: f.object, grown: grown}
		}
		if known && reversible(u, f.gone || f.fresh, myers) {
			counts[f.path] = FileChange{Path: f.path, Added: u.Deleted, Deleted: u.Added, Binary: u.Binary}
		} else {
			count = append(count, f.path)
		}
		files = append(files, f)
		paths = append(paths, f.path)
	}
	if len(paths) == 0 {
		return nil, nil, nil
	}
	var wg sync.WaitGroup
	var counted []FileChange
	var countErr error
	if len(count) > 0 {
		wg.Go(func() { counted, countErr = c.repo.numstatOf(ctx, from, rs.Commit, count) })
	}
	b, err := openBeneath(c.repo.Top)
	if err != nil {
		wg.Wait()
		return nil, nil, fmt.Errorf("restore: %w", err)
	}
	// The entries come from trees checked against their names
	// (changedPaths): putBack need not read them again.
	err = c.repo.putBack(ctx, b, rs.Commit, paths, tree, nil, true)
	b.Close()
	wg.Wait()
	if err != nil {
		return nil, nil, err
	}
	for i := range files {
		files[i].size = tree[files[i].path].size
	}
	// A count git could not make is the checkpoint's to make again.
	if countErr == nil {
		for _, fc := range counted {
			counts[fc.Path] = fc
		}
	}
	return files, counts, nil
}

// changedPaths is what `git diff-tree -r --no-renames from to` says of
// the paths wanted, in path order, read from the two commits' trees on
// the paths' way (treeOf: each checked against its name, and kept, so the
// tree the undo's checkpoint is built on and the one Unchanged read are
// read once) rather than from a git process, which took a tenth of an
// undo of 10,000 added files. A path that is a directory on one side is
// absent there, as a file-by-file diff has it. errNotQuick, for any tree
// it cannot read so (a planted one, one out of git's order, a file on a
// path's way), sends the restore the long way, which reads them through
// git.
func (c *Checkpoints) changedPaths(ctx context.Context, from, to string, wanted map[string]bool) ([]rawChange, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sides [2]*treeDirs
	for i, commit := range []string{from, to} {
		tree, err := c.commitTreeOf(ctx, commit)
		if err != nil {
			return nil, errNotQuick
		}
		sides[i] = &treeDirs{c: c, tree: tree, dirs: map[string][]dirEntry{}}
	}
	var changes []rawChange
	for _, p := range slices.Sorted(maps.Keys(wanted)) {
		var got [2]*dirEntry
		for i, side := range sides {
			e, err := side.entry(ctx, p)
			if err != nil {
				return nil, errNotQuick
			}
			if e != nil && !e.isTree() {
				got[i] = e
			}
		}
		ch := rawChange{srcMode: nullMode, dstMode: nullMode, path: p}
		if got[0] != nil {
			ch.srcMode = canonMode(got[0].mode)
		}
		if got[1] != nil {
			ch.dstMode, ch.dstObject = canonMode(got[1].mode), hex.EncodeToString(got[1].id[:])
		}
		if got[0] == nil && got[1] == nil || got[0] != nil && got[1] != nil && ch.srcMode == ch.dstMode && got[0].id == got[1].id {
			continue
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// reversible reports whether a file's restore counts the lines of u,
// the one change it takes back, reversed: always for a file added or
// removed whole (all its lines, either way) and for a binary one; for a
// changed one only where git's default diff is sure to find the fewest
// changes both ways, which then are the same lines. Its Myers search
// gives up on the fewest only past 256 steps (XDL_MAX_COST_MIN and
// XDL_HEUR_MIN_COST in git's xdiff), and no change of fewer lines added
// and removed needs that many, in either direction; the lines it sets
// aside first (those with no match on the other side, or too many) are
// chosen alike both ways.
func reversible(u FileChange, whole, myers bool) bool {
	return whole || u.Binary || (myers && u.Added+u.Deleted < 256)
}

// nullMode is the mode git's raw diff gives a path one side lacks.
const nullMode = "000000"

// rawChange is one record of `git diff-tree -r -z` (the raw format).
type rawChange struct {
	srcMode, dstMode, dstObject, path string
}

// parseRaw reads `git diff-tree -r -z --no-renames` output, keeping the
// paths in wanted (all when wanted is nil): per path
// ":srcmode dstmode srcobject dstobject status NUL path NUL".
func parseRaw(out []byte, wanted map[string]bool) ([]rawChange, error) {
	var changes []rawChange
	for len(out) > 0 {
		rec, rest, ok := bytes.Cut(out, []byte{0})
		if !ok {
			break
		}
		name, rest, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			break
		}
		out = rest
		if wanted != nil && !wanted[string(name)] {
			continue
		}
		// Split by hand: an undo of ten thousand files read two such
		// diffs, and five strings a record were most of their cost.
		var f [5][]byte
		fields := bytes.TrimPrefix(rec, []byte(":"))
		n := 0
		for n < 5 {
			fields = bytes.TrimLeft(fields, " ")
			if len(fields) == 0 {
				break
			}
			f[n], fields, _ = bytes.Cut(fields, []byte(" "))
			n++
		}
		if n != 5 || len(bytes.TrimSpace(fields)) > 0 {
			return nil, fmt.Errorf("git's diff of trees: a record it cannot read: %q", rec)
		}
		changes = append(changes, rawChange{srcMode: mode(f[0]), dstMode: mode(f[1]), dstObject: string(f[3]), path: string(name)})
	}
	return changes, nil
}

// mode is a tree entry's mode as a string, the common ones without an
// allocation.
func mode(b []byte) string {
	for _, m := range [...]string{"100644", "100755", nullMode, "120000", "040000", "160000"} {
		if string(b) == m {
			return m
		}
	}
	return string(b)
}

// manyPaths is the most paths numstatOf names to git one by one; past
// it, git counts every file that differs and the count is filtered here,
// which keeps the command line short.
const manyPaths = 1000

// numstatOf counts the lines paths gain and lose from one commit to
// another, as a checkpoint's own diff counts them (the porcelain, with
// the person's configuration).
func (r *Repo) numstatOf(ctx context.Context, from, to string, paths []string) ([]FileChange, error) {
	args := []string{"diff", "--numstat", "-z", "--no-renames", from, to}
	if len(paths) <= manyPaths {
		args = append(args, "--")
		for _, p := range paths {
			args = append(args, ":(top,literal)"+p)
		}
	}
	out, err := runCmd(ctx, scaled(0, len(paths)), false, r.Top, []string{"GIT_LITERAL_PATHSPECS=0"}, nil, args...)
	if err != nil {
		return nil, err
	}
	wanted := make(map[string]bool, len(paths))
	for _, p := range paths {
		wanted[p] = true
	}
	return slices.DeleteFunc(parseNumstat(out), func(fc FileChange) bool { return !wanted[fc.Path] }), nil
}

// recordRestored is record's way for the checkpoint after a quick
// restore (q), on top of parent, the checkpoint the restore started
// from: ralph's index takes the restored paths from the work tree (one
// update-index, which also keeps their stat for the next status), git
// writes the tree, and one diff of the two trees says which paths
// changed; their counts are the restore's where the tree holds what the
// restore wrote, git's otherwise. A path ralph's index is not to take
// (one left out, or withheld, or over the size bound) sends the
// checkpoint the way through a status (errNotQuick), as does a failure
// before ralph's index is written.
func (c *Checkpoints) recordRestored(ctx context.Context, env []string, name, message, parent string, q *restored, except []string, treeOnly bool) (*Checkpoint, error) {
	if c.store == nil {
		return nil, errNotQuick
	}
	left := make(map[string]bool, len(except))
	for _, p := range except {
		left[p] = true
	}
	want := make(map[string]restoredFile, len(q.files))
	var paths, fresh, kept []string
	var size int64
	for _, f := range q.files {
		if left[f.path] || c.isState(f.path) || f.size > c.maxFile {
			return nil, errNotQuick
		}
		want[f.path] = f
		paths = append(paths, f.path)
		size += f.size
		if f.fresh && !f.gone {
			fresh = append(fresh, f.path)
		}
		if !f.gone {
			kept = append(kept, f.path)
		}
	}
	// The door is asked of the files the restore wrote: one it removed
	// takes nothing into the checkpoint, whose tree then lacks it as the
	// work tree does (ten thousand removed files were ten thousand
	// questions).
	if len(c.withhold(slices.Clone(kept))) != len(kept) {
		return nil, errNotQuick
	}
	// A file the restore brought back that git now ignores is not taken
	// in, as the status would not list it.
	ignored, err := c.ignoredOf(ctx, env, fresh)
	if err != nil {
		return nil, errNotQuick
	}
	paths = slices.DeleteFunc(paths, func(p string) bool { return ignored[p] })
	if len(paths) == 0 {
		return nil, nil
	}
	// Where ralph writes trees itself, the tree is the checkpoint's with
	// the restored entries set, and ralph's index follows later; an
	// index not yet trusted (treeOnly) is not written from.
	if c.quickOK(ctx) {
		cp, err := c.recordRestoredTree(ctx, env, name, message, parent, paths, want, q.counts)
		if !errors.Is(err, errNotQuick) {
			return cp, err
		}
	}
	if treeOnly {
		return nil, errNotQuick
	}
	// ralph's index may lag the quick checkpoints (behind.go); the tree
	// below is written from it.
	if err := c.catchUp(ctx, env); err != nil {
		return nil, errNotQuick
	}
	links := &linkCheck{repo: c.repo, seen: map[string]bool{}}
	rest, err := c.forget(ctx, env, links, paths)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if len(rest) > 0 {
		if err := c.update(ctx, env, rest, size, nil); err != nil {
			// git wrote nothing of the index: the status's way finds
			// what is in the way.
			return nil, errNotQuick
		}
	}
	out, err := c.repo.GitSized(ctx, env, c.writing("write-tree")...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	files, err := c.restoredNumstat(ctx, parent, tree, want, q.counts)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	cp := &Checkpoint{Ref: c.Ref(name), Parent: parent, Files: files}
	var w *writers // the store writes the commit
	if err := c.commitCheckpoint(ctx, env, cp, message, tree, rest, false, &w); err != nil {
		return nil, err
	}
	return cp, nil
}

// restoredNumstat is the numstat of tree against parent: the paths one
// diff of the two trees lists, each with the restore's count when the
// tree holds what the restore wrote there, and git's otherwise.
func (c *Checkpoints) restoredNumstat(ctx context.Context, parent, tree string, want map[string]restoredFile, counts map[string]FileChange) ([]FileChange, error) {
	out, err := c.repo.GitSized(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", parent, tree)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	changes, err := parseRaw(out, nil)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var files []FileChange
	var others []string
	for _, ch := range changes {
		f, ok := want[ch.path]
		fc, counted := counts[ch.path]
		asWritten := ok && ((f.gone && ch.dstMode == nullMode) || (!f.gone && ch.dstMode == f.mode && ch.dstObject == f.object))
		if asWritten && counted {
			files = append(files, fc)
		} else {
			others = append(others, ch.path)
		}
	}
	if len(others) > 0 {
		more, err := c.repo.numstatOf(ctx, parent, tree, others)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		files = append(files, more...)
	}
	slices.SortFunc(files, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// recordRestoredTree is recordRestored's way where ralph writes trees
// itself (treewrite.go): the checkpoint's tree is parent's with each
// restored path set as the restore wrote it (its commit's mode and
// object) or taken out, built from the trees on those paths alone. An
// undo of 10,000 files once spent a fifth of its time here on git's way:
// an update-index that stat'ed and hashed every restored file again, a
// write-tree of the whole index and a diff of the two trees, when the
// restore had just written those very entries. ralph's index takes them
// later, as after a task's quick checkpoint (behind.go): the next look
// in this process catches it up, and a later process's first checkpoint
// looks at the whole tree. errNotQuick, with nothing written, sends the
// checkpoint the way through ralph's index.
func (c *Checkpoints) recordRestoredTree(ctx context.Context, env []string, name, message, parent string, paths []string,
	want map[string]restoredFile, counts map[string]FileChange) (*Checkpoint, error) {
	prev, err := c.commitTreeOf(ctx, parent)
	if err != nil {
		return nil, errNotQuick
	}
	found := make([]*quickFile, 0, len(paths))
	links := &linkCheck{repo: c.repo, seen: map[string]bool{}}
	for _, p := range paths {
		if !quickPath(p) || links.beyond(p) {
			return nil, errNotQuick
		}
	}
	stats := newStatter(c.repo.Top)
	defer stats.close()
	sts, errs := stats.lstatAll(paths)
	for i, p := range paths {
		f := want[p]
		if !asRestored(f, sts[i], errs[i]) {
			return nil, errNotQuick
		}
		q := &quickFile{path: p, gone: f.gone, mode: f.mode}
		if !f.gone {
			if len(f.object) != 2*len(q.id) {
				return nil, errNotQuick
			}
			if _, err := hex.Decode(q.id[:], []byte(f.object)); err != nil {
				return nil, errNotQuick
			}
		}
		found = append(found, q)
	}
	tree, err := c.rewrite(ctx, prev, found)
	if err != nil {
		return nil, err
	}
	// Every path differs from parent (the restore wrote only those that
	// did); the restore counted most of them.
	var files []FileChange
	var others []string
	for _, p := range paths {
		if fc, ok := counts[p]; ok {
			files = append(files, fc)
		} else {
			others = append(others, p)
		}
	}
	if len(others) > 0 {
		more, err := c.repo.numstatOf(ctx, parent, tree, others)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		files = append(files, more...)
	}
	slices.SortFunc(files, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	cp := &Checkpoint{Ref: c.Ref(name), Parent: parent, Files: files}
	var w *writers // the store writes the commit
	if err := c.commitCheckpoint(ctx, env, cp, message, tree, paths, false, &w); err != nil {
		return nil, err
	}
	c.fallBehind(entriesOf(found))
	return cp, nil
}

// asRestored reports whether the work tree still holds f as the restore
// left it, by its lstat (st, err; the path is beyond no link): gone, or a
// file (a link for mode 120000) of the size written, executable as its
// mode says. A file the person wrote since (an editor saving beside the
// undo) makes the checkpoint take the paths from the work tree, as git
// reads them.
func asRestored(f restoredFile, st pathStat, err error) bool {
	if f.gone {
		return errors.Is(err, fs.ErrNotExist)
	}
	return err == nil && st.size == f.size && sameMode(st.mode, f.mode)
}
