package git

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A checkpoint after a turn used to end in two short git processes one
// after the other: cat-file for the commit it follows (its raw tree, see
// raw.go) and for-each-ref for the person's branches (see heads.go). On
// a loaded two-core machine each cost several milliseconds of starting a
// process, on the way out of every one-shot that wrote a file. Both are
// read here from the repository's files, as the store writes them (see
// objects.go), for the plain layout only; anything this does not
// recognise (a symbolic ref, a name git might spell another way, a
// packed object, another layout) returns false, and git reads it.

// branchName matches the branch names read without git: the characters
// people use, no component starting with a dot or ending in ".lock", no
// "..". Git refuses some names this takes for others (a name git has
// no trouble with but this does not take goes to git).
// It is compiled on first use, as every pattern is (docs/development.md,
// "Start-up budget").
var branchName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_+-][A-Za-z0-9_+.-]*(/[A-Za-z0-9_+-][A-Za-z0-9_+.-]*)*$`)
})

// plainBranch reports whether name (after refs/heads/) is read here.
func plainBranch(name string) bool {
	if !branchName().MatchString(name) || strings.Contains(name, "..") {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if strings.HasSuffix(c, ".lock") || strings.HasSuffix(c, ".") {
			return false
		}
	}
	return true
}

// localBranches lists the local branches as "name commit", sorted by name
// as git for-each-ref sorts them: the loose refs under refs/heads, and
// the packed ones no loose ref overrides. ok is false when git must tell.
// A branch whose commit is missing from the repository (a damaged one) is
// listed, where git would leave it out with a warning.
func localBranches(common string) (branches []string, ok bool) {
	if nativeStore(common) == nil {
		return nil, false
	}
	root, err := os.OpenRoot(common)
	if err != nil {
		return nil, false
	}
	defer root.Close()
	commits := map[string]string{}
	fi, err := root.Lstat("refs/heads")
	switch {
	case err == nil && fi.IsDir():
		err = fs.WalkDir(root.FS(), "refs/heads", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			name := strings.TrimPrefix(p, "refs/heads/")
			if !d.Type().IsRegular() || !plainBranch(name) {
				return errNotPlain
			}
			data, err := root.ReadFile(p)
			if err != nil {
				return err
			}
			commit := strings.TrimSuffix(string(data), "\n")
			if len(commit) != 40 || !isObjectName(commit) {
				return errNotPlain // a symbolic ref, or one being written
			}
			commits[name] = commit
			return nil
		})
		if err != nil {
			return nil, false
		}
	case err == nil, !errors.Is(err, fs.ErrNotExist):
		return nil, false
	}
	if !readPacked(root, commits) {
		return nil, false
	}
	names := make([]string, 0, len(commits))
	for name := range commits {
		names = append(names, name)
	}
	// Byte order, as git's for-each-ref sorts by refname.
	slices.Sort(names)
	for _, name := range names {
		branches = append(branches, name+" "+commits[name])
	}
	return branches, true
}

// readPacked adds the branches of packed-refs that no loose ref overrides
// to commits; false when the file is not as git writes it. A file git
// wrote sorted (its header says so) is read only up to the end of
// refs/heads/: the refs after it are every checkpoint's of every session
// (refs/ralph/...), once a pack-refs took them in, and reading them all
// at every checkpoint made a task late in a long run slower than an early
// one.
func readPacked(root *os.Root, commits map[string]string) bool {
	fi, err := root.Lstat("packed-refs")
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := root.Open("packed-refs")
	if err != nil {
		return false
	}
	defer f.Close()
	loose := make(map[string]bool, len(commits))
	for name := range commits {
		loose[name] = true
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	sorted := false
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if first && strings.HasPrefix(line, "# pack-refs with:") {
			sorted = slices.Contains(strings.Fields(line), "sorted")
		}
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue // the header, a tag's peeled commit
		}
		commit, ref, found := strings.Cut(line, " ")
		if !found || len(commit) != 40 || !isObjectName(commit) {
			return false
		}
		name, branch := strings.CutPrefix(ref, "refs/heads/")
		if !branch {
			if sorted && ref > "refs/heads/" {
				return true // past the branches
			}
			continue
		}
		if loose[name] {
			continue
		}
		if !plainBranch(name) {
			return false
		}
		commits[name] = commit
	}
	return sc.Err() == nil
}

// maxLooseCommit bounds the commit object read without git: a checkpoint
// commit is a few hundred bytes, and a larger one goes to git.
const maxLooseCommit = 1 << 20

// looseCommit reads a commit object stored loose in the repository (what
// `git cat-file commit` prints); ok is false for one git must read (a
// packed object, another layout, anything malformed).
func looseCommit(common, name string) (body []byte, ok bool) {
	door := nativeDoor(common)
	if door == nil {
		return nil, false
	}
	defer door.Close()
	return readLooseCommit(door, name)
}

// nativeDoor is a door rooted at the common directory common for reading
// its files without git, or nil where its layout is not the plain one
// (nativeStore) or the directory cannot be opened.
func nativeDoor(common string) *rootfs.Fs {
	if nativeStore(common) == nil {
		return nil
	}
	door, err := rootfs.New(common)
	if err != nil {
		return nil
	}
	return door
}

// readLooseCommit reads the loose commit object name through door, rooted
// at the common directory, as ralph reads every admin file (gitdoor.go):
// no link on the way, nothing but a regular file, opened without
// blocking. It reads at most maxLooseCommit bytes of the file and of the
// commit, takes a file only as git writes one (nothing after the
// compressed stream), and a commit only if its bytes have its name: git
// reads a pack before a loose object, so a loose copy planted at a packed
// commit's name would otherwise be read in its place.
func readLooseCommit(door *rootfs.Fs, name string) (body []byte, ok bool) {
	return readLoose(door, name, commitKind, maxLooseCommit)
}

// readLoose reads the loose object name of kind, of at most max bytes
// stored and inflated, as readLooseCommit reads a commit.
func readLoose(door *rootfs.Fs, name, kind string, max int64) (body []byte, ok bool) {
	if len(name) != 40 || !isObjectName(name) {
		return nil, false
	}
	f, err := door.OpenRegular(filepath.Join(door.Dir(), "objects", name[:2], name[2:]))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	in := bufio.NewReader(io.LimitReader(f, max+1))
	zr, err := zlib.NewReader(in)
	if err != nil {
		return nil, false
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, max+64))
	if err != nil || zr.Close() != nil {
		return nil, false
	}
	if _, err := in.ReadByte(); err != io.EOF {
		return nil, false // more after the stream, or past the bound
	}
	if sum := sha1.Sum(raw); hex.EncodeToString(sum[:]) != name {
		return nil, false
	}
	header, body, found := bytes.Cut(raw, []byte{0})
	size, isKind := strings.CutPrefix(string(header), kind+" ")
	if !found || !isKind || size != strconv.Itoa(len(body)) || int64(len(body)) > max {
		return nil, false
	}
	return body, true
}
