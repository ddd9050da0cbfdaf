package git

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// Before an undo writes anything, the work tree's state is checkpointed,
// so that nothing of the person's is lost; a new process cannot trust
// ralph's index to match the latest checkpoint (it may lag or lead it,
// see NewCheckpoints), so that checkpoint was a status over the whole
// tree, whose look at HEAD alone listed every file a turn had added: a
// third of an undo of 10,000 added files. What the undo needs is that the
// files it touches are as the latest checkpoint has them. Unchanged
// proves that from the index's own stat data, as git's status would, for
// those paths alone: a path the checkpoint lacks must be gone, and one it
// has must be in the index with the checkpoint's object and mode and
// with the stat data lstat gives now, written before the index was (a
// file changed in the index's last instant is "racily clean" to git and
// proves nothing here). Anything else, or an index this reader does not
// take (split, sparse, another hash), is no proof, and the undo looks at
// the whole tree as before.

// indexEntry is what Unchanged reads of an index entry.
type indexEntry struct {
	stat  [10]uint32 // ctime s, ns, mtime s, ns, dev, ino, mode, uid, gid, size
	id    [20]byte
	flags uint16 // the stage, assume-valid and extended bits
	extra uint16 // skip-worktree, intent-to-add
}

// errIndexFormat says an index is one readIndexEntries does not read.
var errIndexFormat = errors.New("an index this reader does not take")

// namedEntry is an index entry and its path.
type namedEntry struct {
	name string
	indexEntry
}

// parseIndex reads an index file (versions 2 to 4, SHA-1): its entries
// in order, and its link extension (a split index's), nil when it has
// none. A sparse index (directories as entries) is errIndexFormat.
func parseIndex(data []byte) ([]namedEntry, []byte, error) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, nil, errIndexFormat
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, nil, errIndexFormat
	}
	count := binary.BigEndian.Uint32(data[8:12])
	body := data[12 : len(data)-20]
	if uint64(count) > uint64(len(body)/8) {
		return nil, nil, errIndexFormat
	}
	out := make([]namedEntry, 0, count)
	var prev []byte
	off := 0
	for range count {
		const fixed = 40 + 20 + 2
		if off+fixed > len(body) {
			return nil, nil, errIndexFormat
		}
		var e indexEntry
		for i := range e.stat {
			e.stat[i] = binary.BigEndian.Uint32(body[off+4*i:])
		}
		copy(e.id[:], body[off+40:off+60])
		e.flags = binary.BigEndian.Uint16(body[off+60:])
		start := off + fixed
		if e.flags&0x4000 != 0 {
			if version < 3 || start+2 > len(body) {
				return nil, nil, errIndexFormat
			}
			e.extra = binary.BigEndian.Uint16(body[start:])
			start += 2
		}
		var name []byte
		if version == 4 {
			strip, n := indexVarint(body[start:])
			if n == 0 || strip > len(prev) {
				return nil, nil, errIndexFormat
			}
			nul := bytes.IndexByte(body[start+n:], 0)
			if nul < 0 {
				return nil, nil, errIndexFormat
			}
			name = append(prev[:len(prev)-strip:len(prev)-strip], body[start+n:start+n+nul]...)
			off = start + n + nul + 1
		} else {
			nul := bytes.IndexByte(body[start:], 0)
			if nul < 0 {
				return nil, nil, errIndexFormat
			}
			name = body[start : start+nul]
			// Padded with one to eight NULs to a multiple of eight.
			off += (start - off + nul + 8) &^ 7
		}
		prev = name
		if e.stat[6]&0o170000 == 0o040000 {
			return nil, nil, errIndexFormat // a sparse index's directory
		}
		out = append(out, namedEntry{name: string(name), indexEntry: e})
	}
	var link []byte
	for rest := body[min(off, len(body)):]; len(rest) >= 8; {
		sig, size := string(rest[:4]), binary.BigEndian.Uint32(rest[4:8])
		if uint64(size) > uint64(len(rest)-8) || sig == "sdir" {
			return nil, nil, errIndexFormat
		}
		if sig == "link" {
			link = rest[8 : 8+size]
		}
		rest = rest[8+size:]
	}
	return out, link, nil
}

// readIndexEntries reads the entries named in wanted from an index file,
// split or not: a split index's shared part is read with shared (by its
// file name, sharedindex.<hash>), its entries replaced and deleted as the
// link extension says.
func readIndexEntries(data []byte, wanted map[string]bool, shared func(string) ([]byte, error)) (map[string]indexEntry, error) {
	own, link, err := parseIndex(data)
	if err != nil {
		return nil, err
	}
	all := own
	if link != nil {
		if all, err = unsplit(own, link, shared); err != nil {
			return nil, err
		}
	}
	out := make(map[string]indexEntry, len(wanted))
	for _, e := range all {
		if wanted[e.name] {
			out[e.name] = e.indexEntry
		}
	}
	return out, nil
}

// indexMarked reports whether an index file's data marks any entry
// assume-unchanged or skip-worktree, or cannot be read here (another
// version or hash, a sparse index, a split one whose shared part is
// missing): a copy of it then has every mark cleared (seedIndex), which
// costs a git ls-files, where an unmarked one costs nothing more.
func indexMarked(data []byte, shared func(string) ([]byte, error)) bool {
	own, link, err := parseIndex(data)
	if err != nil {
		return true
	}
	all := own
	if link != nil {
		if all, err = unsplit(own, link, shared); err != nil {
			return true
		}
	}
	for _, e := range all {
		if e.flags&0x8000 != 0 || e.extra&0x4000 != 0 {
			return true
		}
	}
	return false
}

// unsplit is a split index's entries: the shared part's, each replaced
// by the next of own where the replace bitmap says so and left out where
// the delete bitmap does, then the rest of own.
func unsplit(own []namedEntry, link []byte, shared func(string) ([]byte, error)) ([]namedEntry, error) {
	if len(link) < 20 {
		return nil, errIndexFormat
	}
	data, err := shared("sharedindex." + hex.EncodeToString(link[:20]))
	if err != nil {
		return nil, errIndexFormat
	}
	base, baseLink, err := parseIndex(data)
	if err != nil || baseLink != nil {
		return nil, errIndexFormat
	}
	var deleted, replaced map[int]bool
	if rest := link[20:]; len(rest) > 0 {
		if deleted, rest, err = ewahBits(rest); err == nil {
			replaced, rest, err = ewahBits(rest)
		}
		if err != nil || len(rest) != 0 {
			return nil, errIndexFormat
		}
	}
	out := make([]namedEntry, 0, len(base)+len(own))
	k := 0
	for i, e := range base {
		if replaced[i] {
			if k >= len(own) {
				return nil, errIndexFormat
			}
			name := e.name
			e = own[k]
			if e.name == "" {
				e.name = name
			}
			k++
		}
		if !deleted[i] {
			out = append(out, e)
		}
	}
	return append(out, own[k:]...), nil
}

// ewahBits decodes one of git's EWAH bitmaps (ewah_io.c): the bits set,
// and what follows it.
func ewahBits(b []byte) (map[int]bool, []byte, error) {
	if len(b) < 8 {
		return nil, nil, errIndexFormat
	}
	size := int(binary.BigEndian.Uint32(b[0:4]))
	words := int(binary.BigEndian.Uint32(b[4:8]))
	if words > (len(b)-12)/8 {
		return nil, nil, errIndexFormat
	}
	buf := b[8 : 8+8*words]
	set := map[int]bool{}
	pos := 0
	for i := 0; i < words; {
		rlw := binary.BigEndian.Uint64(buf[8*i:])
		i++
		run := int(rlw >> 1 & 0xffffffff)
		literals := int(rlw >> 33)
		if rlw&1 != 0 {
			for j := pos; j < pos+64*run && j < size; j++ {
				set[j] = true
			}
		}
		pos += 64 * run
		if i+literals > words {
			return nil, nil, errIndexFormat
		}
		for range literals {
			w := binary.BigEndian.Uint64(buf[8*i:])
			i++
			for bit := range 64 {
				if w>>bit&1 != 0 && pos+bit < size {
					set[pos+bit] = true
				}
			}
			pos += 64
		}
	}
	return set, b[8+8*words+4:], nil
}

// indexVarint is git's offset encoding of index version 4, and the bytes
// it took (0: malformed).
func indexVarint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := int(c & 127)
	n := 1
	for c&128 != 0 {
		if n >= len(b) || n > 8 {
			return 0, 0
		}
		val++
		c = b[n]
		n++
		val = val<<7 + int(c&127)
	}
	return val, n
}

// Unchanged reports whether the work tree provably holds every path of
// paths (relative to the top) as the latest checkpoint has it, from
// ralph's index's stat data (see above); false is no proof either way.
// On true, a restore from the latest checkpoint that touches only those
// paths goes the quick way even in a process whose index is not yet
// trusted, and its checkpoint is built from the checkpoint's tree.
func (c *Checkpoints) Unchanged(ctx context.Context, paths []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.proven = nil
	if len(paths) == 0 || c.last == "" || c.store == nil || len(c.last) != 2*len(indexEntry{}.id) {
		return false
	}
	wanted := pathSet(paths)
	order := slices.Collect(maps.Keys(wanted))
	links := &linkCheck{repo: c.repo, seen: map[string]bool{}}
	for _, p := range order {
		if !quickPath(p) || links.beyond(p) || c.isState(p) {
			return false
		}
	}
	// The files' stats are taken beside the reading of the index and the
	// trees (lstatAll); every return waits for them.
	stats := newStatter(c.repo.Top)
	defer stats.close()
	statted := make(chan struct{})
	var sts []pathStat
	var stErrs []error
	go func() {
		defer close(statted)
		sts, stErrs = stats.lstatAll(order)
	}()
	defer func() { <-statted }()
	// The index, read through ralph's own door, never through a link.
	if c.ownIndex(c.index) != nil {
		return false
	}
	f, err := c.own.Open(c.index)
	if err != nil {
		return false
	}
	fi, err := f.Stat()
	var data []byte
	if err == nil {
		data, err = io.ReadAll(f)
	}
	f.Close()
	if err != nil {
		return false
	}
	entries, err := readIndexEntries(data, wanted, func(name string) ([]byte, error) { return readAdmin(c.repo.GitDir, name) })
	if err != nil {
		return false
	}
	tree, err := c.commitTreeOf(ctx, c.last)
	if err != nil {
		return false
	}
	dirs := &treeDirs{c: c, tree: tree, dirs: map[string][]dirEntry{}}
	wants := make([]*dirEntry, len(order))
	for i, p := range order {
		if wants[i], err = dirs.entry(ctx, p); err != nil {
			return false
		}
	}
	<-statted
	for i, p := range order {
		want, st, err := wants[i], sts[i], stErrs[i]
		if want == nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return false
			}
			continue
		}
		e, ok := entries[p]
		if err != nil || !ok || e.flags&0xb000 != 0 || e.extra&0x6000 != 0 || e.id != want.id || !sameMode(e.stat[6], want.mode) {
			return false
		}
		if !st.exact || st.mode != e.stat[6] || !sameStat(e, st) || racy(e, fi.ModTime()) {
			return false
		}
	}
	c.proven = &proof{commit: c.last, paths: wanted}
	return true
}

// pathSet is paths as a set.
func pathSet(paths []string) map[string]bool {
	w := make(map[string]bool, len(paths))
	for _, p := range paths {
		w[p] = true
	}
	return w
}

// commitTreeOf is commit's tree: the latest checkpoint's as this process
// wrote it, or the one the latest lookup found, or git's answer. c.mu is
// held.
func (c *Checkpoints) commitTreeOf(ctx context.Context, commit string) (string, error) {
	if commit == c.last && c.lastTree != "" {
		return c.lastTree, nil
	}
	if c.treeSeen[0] == commit && commit != "" {
		return c.treeSeen[1], nil
	}
	// Read as stored and checked against its name (commitTree): a
	// commit ralph or the person's git wrote lately is loose, read here
	// without a git process, which cost a new session's first checkpoint
	// as much as the rest of it.
	tree, err := c.repo.commitTree(ctx, commit)
	if err != nil {
		return "", err
	}
	c.treeSeen = [2]string{commit, tree}
	return tree, nil
}

// treeDirs finds the entries of a checkpoint's tree by path, each
// directory's tree looked up once: from the top for every one of ten
// thousand paths, the lookups were a third of Unchanged's time.
type treeDirs struct {
	c    *Checkpoints
	tree string
	dirs map[string][]dirEntry // a directory's entries; nil when the tree has none
}

// entry is the tree's entry for p, nil when there is none; a file on the
// way where p needs a directory is errNotQuick.
func (t *treeDirs) entry(ctx context.Context, p string) (*dirEntry, error) {
	dir, name := path.Split(p)
	entries, ok := t.dirs[dir]
	if !ok {
		id := t.tree
		if dir != "" {
			e, err := t.c.entryAt(ctx, t.tree, strings.TrimSuffix(dir, "/"))
			if err != nil {
				return nil, err
			}
			if e != nil && !e.isTree() {
				return nil, errNotQuick
			}
			id = ""
			if e != nil {
				id = hex.EncodeToString(e.id[:])
			}
		}
		if id != "" {
			var err error
			if entries, err = t.c.treeOf(ctx, id); err != nil {
				return nil, err
			}
		}
		t.dirs[dir] = entries
	}
	if i := findEntry(entries, name); i >= 0 {
		return &entries[i], nil
	}
	return nil, nil
}

// proof is what Unchanged proved: the work tree holds paths as the
// checkpoint commit has them.
type proof struct {
	commit string
	paths  map[string]bool
}

// covers reports whether the proof holds for a restore of rs from from.
func (p *proof) covers(from string, rs []Restoration) bool {
	if p == nil || p.commit != from {
		return false
	}
	for _, r := range rs {
		for _, path := range r.Paths {
			if !p.paths[path] {
				return false
			}
		}
	}
	return true
}

// pathStat is a path's lstat as git's index keeps it: its mode as git
// records one (0 for what git records no file as), its size, and where
// exact, the ten stat fields of an index entry (the mode's left 0).
type pathStat struct {
	mode  uint32
	size  int64
	exact bool
	data  [10]uint32
}

// sameStat reports whether an entry's stat data is the file's now: its
// times, inode, owner and size, each as git keeps it (the low 32 bits);
// the device is left out, as git leaves it out.
func sameStat(e indexEntry, st pathStat) bool {
	now, was := st.data, e.stat
	now[4], now[6], was[4], was[6] = 0, 0, 0, 0
	return now == was
}

// sameMode reports whether an index entry's mode is the tree entry's.
func sameMode(mode uint32, tree string) bool {
	switch tree {
	case "100644":
		return mode == 0o100644
	case "100755":
		return mode == 0o100755
	case "120000":
		return mode == 0o120000
	}
	return false
}

// racy reports whether an entry's file may have changed in the same
// instant the index was written, where its stat data proves nothing.
func racy(e indexEntry, written time.Time) bool {
	s, ns := uint32(written.Unix()), uint32(written.Nanosecond())
	return s < e.stat[2] || (s == e.stat[2] && ns <= e.stat[3])
}
