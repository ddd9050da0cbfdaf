package git

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// What undo writes into the work tree, and what a checkpoint writes into
// the repository, goes through Go's os.Root held on the directory, as the
// file tools' writes go through a descriptor of the project root (see
// workers/beneath.go): the kernel resolves each name relative to an open
// directory, and no symlink leads out of it. On top of that, no directory
// on the way is a symlink at all: a command may have swapped the
// directory d of a file d/x for a link to the person's home since the
// checkpoint, and d/x is then not the file the checkpoint holds. Such a
// link is replaced by the directory the restore needs, as git checkout
// replaces it; the link is removed, never followed, and what it pointed at
// is not touched.

// ErrUnsafePath says a path a restore was asked to write is not a file of
// the work tree: absolute, climbing out with "..", or inside .git or
// .ralph. Checkpoint records and commits are files a command could have
// forged, so their paths are checked before anything is written.
var ErrUnsafePath = errors.New("not a path inside the work tree")

// errLinkOnPath says a directory on a path is a symlink, which is not
// followed.
var errLinkOnPath = errors.New("a directory on the path is a symbolic link")

// errNotDir says a file stands where a directory of a path should be.
var errNotDir = errors.New("not a directory")

// safePath reports whether p, as git names a file (slash-separated,
// relative to the top), lies inside the work tree and outside .git and
// .ralph. Names are compared case-insensitively: on a case-insensitive
// file system ".GIT/config" is git's own file.
func safePath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || path.Clean(p) != p || !filepath.IsLocal(filepath.FromSlash(p)) {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "." || c == ".." || strings.EqualFold(c, ".git") || strings.EqualFold(c, ".ralph") {
			return false
		}
	}
	return true
}

// maxOpenDirs bounds how many directories a writer keeps open; past it
// each directory is opened for its one use and closed again.
const maxOpenDirs = 4096

// beneath writes into one directory tree (the work tree, or the git
// directory) without following a symlink on the way.
type beneath struct {
	root *os.Root
	mu   sync.Mutex
	dirs map[string]*os.Root // open directories, by path relative to the root
	// fds are the same directories as plain descriptors, opened the
	// first time a file is written in them (dirFd): the restore's writes
	// go through them with one system call each (beneath_unix.go).
	fds map[string]*os.File
	// tmpSuffix ends the name of every temporary file written here: the
	// mark a killed restore's leftovers are known by, and this process.
	tmpSuffix string
}

// openBeneath opens the tree at dir. The caller closes it.
func openBeneath(dir string) (*beneath, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &beneath{root: root, dirs: map[string]*os.Root{}, fds: map[string]*os.File{},
		tmpSuffix: tempMark + strconv.Itoa(os.Getpid())}, nil
}

// Close closes every directory held open.
func (b *beneath) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.dirs {
		_ = d.Close()
	}
	for _, f := range b.fds {
		_ = f.Close()
	}
	b.dirs, b.fds = nil, nil
	_ = b.root.Close()
}

// dir opens the directory rel (slash- or OS-separated, "." for the root)
// without following a symlink on the way. With create, missing
// directories are made and a symlink or other non-directory in the way of
// one is replaced by it; without, a symlink on the way wraps
// errLinkOnPath. done releases the directory.
func (b *beneath) dir(rel string, create bool) (d *os.Root, done func(), err error) {
	rel = filepath.Clean(filepath.FromSlash(rel))
	if rel == "." {
		return b.root, func() {}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dirLocked(rel, create)
}

func (b *beneath) dirLocked(rel string, create bool) (*os.Root, func(), error) {
	if rel == "." {
		return b.root, func() {}, nil
	}
	if d, ok := b.dirs[rel]; ok {
		return d, func() {}, nil
	}
	parent, done, err := b.dirLocked(filepath.Dir(rel), create)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	name := filepath.Base(rel)
	fi, err := parent.Lstat(name)
	switch {
	case err == nil && fi.IsDir():
	case err == nil && fi.Mode()&fs.ModeSymlink == 0:
		// A file where a directory is needed is not removed: it may be
		// the person's, and undo says it could not restore there.
		return nil, nil, &fs.PathError{Op: "open", Path: rel, Err: errNotDir}
	case err == nil && !create:
		return nil, nil, fmt.Errorf("%s: %w", rel, errLinkOnPath)
	case err == nil, errors.Is(err, fs.ErrNotExist) && create:
		if err == nil {
			// A symlink where the checkpoint has a directory: the link
			// is replaced, what it named is left alone.
			if err := parent.Remove(name); err != nil {
				return nil, nil, err
			}
		}
		if err := parent.Mkdir(name, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, nil, err
		}
		if fi, err = parent.Lstat(name); err != nil {
			return nil, nil, err
		}
		if !fi.IsDir() {
			return nil, nil, fmt.Errorf("%s: %w", rel, errLinkOnPath)
		}
	default:
		return nil, nil, err
	}
	d, err := parent.OpenRoot(name)
	if err != nil {
		return nil, nil, err
	}
	// A link swapped in between the look and the open was followed, if
	// only inside the parent: the directory opened must be the one seen.
	if now, err := d.Stat("."); err != nil || !os.SameFile(now, fi) {
		_ = d.Close()
		return nil, nil, fmt.Errorf("%s: %w", rel, errLinkOnPath)
	}
	if len(b.dirs) >= maxOpenDirs {
		return d, func() { _ = d.Close() }, nil
	}
	b.dirs[rel] = d
	return d, func() {}, nil
}

// remove removes the file rel (a symlink itself, never what it names);
// one that is not there, or lies behind a symlink, is already gone from
// the tree.
func (b *beneath) remove(rel string) error {
	d, done, err := b.dir(filepath.Dir(filepath.FromSlash(rel)), false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errLinkOnPath) {
			return nil
		}
		return err
	}
	defer done()
	name := filepath.Base(filepath.FromSlash(rel))
	// A directory is no file git tracks: one in the name's place now was
	// made for another path of the restore (a link the restore replaced).
	if fi, err := d.Lstat(name); err != nil || fi.IsDir() {
		return nil
	}
	if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeEmptyDirs removes the directories of the removed files that
// they left empty, up to (not including) the root, as git does when it
// removes files. Each directory is tried once, deepest first, after all
// the removals: tried after each file, a directory of ten thousand was
// ten thousand failed removals. A directory that stays (it holds more)
// keeps its parents; a symlink on the way ends the climb.
func (b *beneath) removeEmptyDirs(removed []string) {
	dirs := map[string]bool{}
	for _, p := range removed {
		for d := filepath.Dir(filepath.FromSlash(p)); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	levels := func(d string) int { return strings.Count(d, string(filepath.Separator)) }
	slices.SortFunc(order, func(x, y string) int { return cmp.Or(levels(y)-levels(x), strings.Compare(x, y)) })
	kept := map[string]bool{}
	for _, d := range order {
		if kept[d] || !b.removeEmptyDir(d) {
			for x := filepath.Dir(d); x != "."; x = filepath.Dir(x) {
				kept[x] = true
			}
		}
	}
}

// removeEmptyDir removes the directory dir if it is empty and no link,
// and says whether it did.
func (b *beneath) removeEmptyDir(dir string) bool {
	parent, done, err := b.dir(filepath.Dir(dir), false)
	if err != nil {
		return false
	}
	name := filepath.Base(dir)
	fi, err := parent.Lstat(name)
	if err == nil && fi.IsDir() {
		err = parent.Remove(name)
	} else if err == nil {
		err = errLinkOnPath
	}
	done()
	if err != nil {
		return false
	}
	b.forget(dir)
	return true
}

// forget closes a directory that was removed.
func (b *beneath) forget(rel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d, ok := b.dirs[rel]; ok {
		_ = d.Close()
		delete(b.dirs, rel)
	}
	if f, ok := b.fds[rel]; ok {
		_ = f.Close()
		delete(b.fds, rel)
	}
}

// dirFd is the directory rel (as dir returned it, d) as a plain
// descriptor, held open beside d; false when d is not held open (past
// maxOpenDirs), and the writer takes the slower way through d. The
// descriptor is d's directory itself, opened through d, so no name is
// resolved again.
func (b *beneath) dirFd(rel string, d *os.Root) (*os.File, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f, ok := b.fds[rel]; ok {
		return f, true
	}
	if held, ok := b.dirs[rel]; (!ok || held != d) && d != b.root {
		return nil, false
	}
	f, err := d.Open(".")
	if err != nil {
		return nil, false
	}
	b.fds[rel] = f
	return f, true
}
