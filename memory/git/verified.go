package git

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"maps"
	"path"
	"strconv"
	"strings"
)

// A command of the model's may write .git/objects (its own git commit
// needs to), and git reads an object without checking that its bytes have
// its name. What undo writes back is therefore read along a chain that
// starts at a name the model cannot change, the checkpoint's commit in
// the session's log under .ralph/: the commit, every tree on the way to
// each path, and each blob (checkBlobs) are checked against their names
// before anything is written. Without it the model could plant a tree
// under an old checkpoint's name whose entry for your file names a blob
// of its own, and undo would put that back as yours.

// checkEntries checks that commit holds, for each of paths, the entry
// tree gives (a path tree lacks, which a restore removes, must be absent
// from commit too), reading commit and the trees on the paths' way as
// stored, each checked against its name (ErrObjectChanged).
func (r *Repo) checkEntries(ctx context.Context, commit string, paths []string, tree map[string]treeEntry) error {
	root, err := r.commitTree(ctx, commit)
	if err != nil {
		return err
	}
	return r.checkTreeEntries(ctx, root, paths, tree)
}

// checkTreeEntries is checkEntries from a tree named root.
func (r *Repo) checkTreeEntries(ctx context.Context, root string, paths []string, tree map[string]treeEntry) error {
	dirs := map[string]map[string]storedEntry{}
	// The trees are read a level at a time, each level in one git.
	want := map[string]string{"": root}
	for len(want) > 0 {
		ids := make([]string, 0, len(want))
		for _, id := range want {
			ids = append(ids, id)
		}
		bodies, err := r.readTrees(ctx, ids)
		if err != nil {
			if errors.Is(err, ErrObjectChanged) {
				return fmt.Errorf("restore: %w; nothing was restored", err)
			}
			return fmt.Errorf("restore: %w", err)
		}
		next := map[string]string{}
		for dir, id := range want {
			entries, err := parseStoredTree(bodies[id], len(id)/2)
			if err != nil {
				return fmt.Errorf("restore: tree %s: %w", id, err)
			}
			dirs[dir] = entries
		}
		for _, p := range paths {
			d := path.Dir(p)
			if d == "." {
				d = ""
			}
			// The first directory on p's way not yet read, whose parent
			// was read in this level.
			for _, sub := range ancestors(d) {
				if _, ok := dirs[sub]; ok {
					continue
				}
				parent, name := splitDir(sub)
				pe, ok := dirs[parent]
				if !ok {
					break
				}
				if e, ok := pe[name]; ok && e.mode == "40000" {
					next[sub] = e.id
				}
				break
			}
		}
		want = next
	}
	for _, p := range paths {
		got, ok := lookup(dirs, p)
		exp, expOK := tree[p]
		switch {
		case !expOK && !ok:
		case expOK && ok && canonMode(got.mode) == exp.mode && got.id == exp.object:
		default:
			return fmt.Errorf("restore: %s: what git read of the checkpoint is not what its trees hold: %w; nothing was restored", p, ErrObjectChanged)
		}
	}
	return nil
}

// maxLooseTree bounds a tree read without git: a root tree of 10,000
// files is some 370 KB.
const maxLooseTree = 16 << 20

// readTrees reads the trees ids, each checked against its name: the loose
// ones without git (readLoose checks them), the others in one git. It is
// the one way ralph reads a tree's bytes itself: the restore's check and
// the quick checkpoint's tree both build on what it read.
func (r *Repo) readTrees(ctx context.Context, ids []string) (map[string][]byte, error) {
	bodies := make(map[string][]byte, len(ids))
	var packed []string
	door := nativeDoor(r.common())
	for _, id := range ids {
		var body []byte
		ok := false
		if door != nil {
			body, ok = readLoose(door, id, "tree", maxLooseTree)
		}
		if ok {
			bodies[id] = body
		} else {
			packed = append(packed, id)
		}
	}
	if door != nil {
		door.Close()
	}
	if len(packed) == 0 {
		return bodies, nil
	}
	more, err := r.readObjects(ctx, "tree", packed)
	if err != nil {
		return nil, err
	}
	maps.Copy(bodies, more)
	return bodies, nil
}

// commitTree is the tree commit names, commit read as stored and checked
// against its name: a loose commit through the door (looseCommit checks
// it), a packed one through git.
func (r *Repo) commitTree(ctx context.Context, commit string) (string, error) {
	body, ok := looseCommit(r.common(), commit)
	if !ok {
		bodies, err := r.readObjects(ctx, commitKind, []string{commit})
		if err != nil {
			return "", fmt.Errorf("restore: %w", err)
		}
		body = bodies[commit]
	}
	line, _, _ := bytes.Cut(body, []byte{'\n'})
	t, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok {
		return "", fmt.Errorf("restore: commit %s names no tree", commit)
	}
	return string(t), nil
}

// readObjects reads the objects ids, each of kind, in one `git cat-file
// --batch`, and fails with ErrObjectChanged when one's bytes do not hash
// to its name.
func (r *Repo) readObjects(ctx context.Context, kind string, ids []string) (map[string][]byte, error) {
	var in bytes.Buffer
	for _, id := range ids {
		if !isObjectName(id) {
			return nil, fmt.Errorf("%q is not an object's name", id)
		}
		in.WriteString(id + "\n")
	}
	out, err := runCmd(ctx, Timeout, false, r.Top, nil, in.Bytes(), "cat-file", "--batch", "--buffer")
	if err != nil {
		return nil, err
	}
	bodies := make(map[string][]byte, len(ids))
	for _, id := range ids {
		header, rest, ok := bytes.Cut(out, []byte{'\n'})
		f := strings.Fields(string(header))
		if !ok || len(f) != 3 || f[0] != id || f[1] != kind {
			return nil, fmt.Errorf("git has no %s %s: %s", kind, id, header)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n+1 > len(rest) {
			return nil, fmt.Errorf("reading %s %s from git: %s", kind, id, header)
		}
		body := rest[:n]
		if storedName(kind, body, len(id)) != id {
			return nil, fmt.Errorf("%s %s: %w", kind, id, ErrObjectChanged)
		}
		bodies[id] = body
		out = rest[n+1:]
	}
	return bodies, nil
}

// storedName is the name, of hexLen hex digits (40 for SHA-1, 64 for
// SHA-256), of the object of kind with body.
func storedName(kind string, body []byte, hexLen int) string {
	h := objectHash(kind, int64(len(body)), hexLen)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// objectHash is the hash of an object of kind and n bytes, its header
// written, for a name of hexLen hex digits.
func objectHash(kind string, n int64, hexLen int) hash.Hash {
	var h hash.Hash = sha1.New()
	if hexLen == 2*sha256.Size {
		h = sha256.New()
	}
	fmt.Fprintf(h, "%s %d\x00", kind, n)
	return h
}

// storedEntry is a tree entry as stored: its mode as written and its
// object's name in hex.
type storedEntry struct{ mode, id string }

// parseStoredTree reads a tree object's body whose names are idLen bytes,
// by entry name.
func parseStoredTree(body []byte, idLen int) (map[string]storedEntry, error) {
	out := map[string]storedEntry{}
	err := eachTreeEntry(body, idLen, func(mode, name, id []byte) {
		out[string(name)] = storedEntry{mode: string(mode), id: hex.EncodeToString(id)}
	})
	return out, err
}

// lookup is p's entry in the trees read, if it is a file or a submodule.
func lookup(dirs map[string]map[string]storedEntry, p string) (storedEntry, bool) {
	parent, name := splitDir(p)
	d, ok := dirs[parent]
	if !ok {
		return storedEntry{}, false
	}
	e, ok := d[name]
	if !ok || e.mode == "40000" {
		return storedEntry{}, false
	}
	return e, true
}

// canonMode is the mode git reports for an entry stored with mode, as
// ls-tree and diff-tree print it: old trees may hold 100664 and the like.
func canonMode(mode string) string {
	switch mode {
	case "40000", "160000", "120000":
		return mode
	}
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil {
		return mode
	}
	if m&0o170000 == 0o120000 {
		return "120000"
	}
	if m&0o111 != 0 {
		return "100755"
	}
	return "100644"
}

// ancestors are d and the directories above it, the top first, without
// the top itself ("").
func ancestors(d string) []string {
	if d == "" {
		return nil
	}
	var out []string
	for i := 0; i <= len(d); i++ {
		if i == len(d) || d[i] == '/' {
			out = append(out, d[:i])
		}
	}
	return out
}

// splitDir splits p into its directory ("" at the top) and last name.
func splitDir(p string) (dir, name string) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}
