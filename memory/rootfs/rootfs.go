// Package rootfs is the one door through which ralph touches its own files
// under a project: the state markdown, the instructions, plans, .ralph/**,
// logs, transcripts and history. It is an afero.Fs held on the project's
// root through Go's os.Root (as memory/git's undo and refs are), so the
// kernel resolves every name relative to an open directory and no symlink
// leads out of it.
//
// os.Root alone is not enough for ralph's own writes: it follows a link
// that stays inside the root (RALPH_PROGRESS.md -> .git/config) and
// creates through a dangling one whose target is inside. So every write,
// append, create, rename, remove and chmod here walks the path one
// directory at a time and refuses a symlink in any component, the last
// one included (ErrLink); a file that does not exist yet is created with
// O_EXCL, which never follows a link. With no link on the way, the file
// written is the file named: a write lands in .git/ or .ralph/ only when
// the caller's path names that directory.
//
// Reads follow links only while they stay inside the root; a link out of
// it fails. Instruction files (CLAUDE.md -> AGENTS.md) are read through
// the session's door (memory/kept, coordinator/project), which says when a
// file is a link out of the project (LinkOutError) and reads it only when
// the person allowed its target.
//
// Callers pass absolute paths, as they did to afero.OsFs: a path is made
// relative to the root (as given or with its links resolved), and an
// absolute path outside the root is an error (ErrOutsideRoot), never a
// fall-through to the whole file system. Paths outside any project (the
// person's config, the registry, the state and runtime directories) use
// Person, a file system of its own.
package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/realpath"
)

// ErrOutsideRoot says a path given to a project's file system lies outside
// the project.
var ErrOutsideRoot = errors.New("path outside the project root")

// ErrLink says ralph refused to write through a symbolic link: a file it
// writes, or a directory on the way to it, is a link, which a command may
// have planted to send ralph's write elsewhere.
var ErrLink = errors.New("a symbolic link where ralph writes its own file")

// Fs is the project's file system: an afero.Fs confined to one directory.
type Fs struct {
	root *os.Root
	// dir is the root as given (absolute, clean); resolved is the same
	// directory with its links resolved. Callers name files under either.
	dir, resolved string
}

var _ afero.Fs = (*Fs)(nil)
var _ afero.Lstater = (*Fs)(nil)

// New opens the door on the project directory dir. The root stays open
// for the life of the process: a project's file system is made once per
// command.
func New(dir string) (*Fs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project root %s: %w", dir, err)
	}
	resolved, err := realpath.Eval(abs)
	if err != nil {
		return nil, fmt.Errorf("project root %s: %w", dir, err)
	}
	r, err := os.OpenRoot(resolved)
	if err != nil {
		return nil, fmt.Errorf("project root %s: %w", dir, err)
	}
	return &Fs{root: r, dir: filepath.Clean(abs), resolved: resolved}, nil
}

// Dir is the root as given to New.
func (f *Fs) Dir() string { return f.dir }

// Sub opens a door on the directory dir under the root, reached through
// the root: a link on the way is followed only while it stays inside the
// root, and the new door follows links only while they stay inside dir.
// A skill's own files are read through one (memory/skills), so a skill
// may hand the model its own directory and nothing beside it. Close frees
// it.
func (f *Fs) Sub(dir string) (*Fs, error) {
	r, err := f.rel(dir)
	if err != nil {
		return nil, err
	}
	sub, err := f.root.OpenRoot(r)
	if err != nil {
		return nil, f.pathErr(err, dir)
	}
	abs := filepath.Join(f.dir, r)
	return &Fs{root: sub, dir: abs, resolved: abs}, nil
}

// Close closes the door; a door of New is meant to stay open for the
// process, a door of Sub is closed when its reads are done.
func (f *Fs) Close() error { return f.root.Close() }

// IsReal reports whether fsys reaches the disk (the project door, or the
// person's own directories), as opposed to an in-memory one of a test:
// git, sockets and processes need a real one.
func IsReal(fsys afero.Fs) bool {
	switch fsys.(type) {
	case *Fs, *Projects, *PersonFs, *afero.OsFs:
		return true
	}
	return false
}

// rel turns name into a path relative to the root. A relative name is
// taken relative to the working directory, as the OS file system took it.
func (f *Fs) rel(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	abs := name
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = filepath.Abs(name); err != nil {
			return "", err
		}
	}
	abs = filepath.Clean(abs)
	for _, base := range []string{f.dir, f.resolved} {
		if r, err := filepath.Rel(base, abs); err == nil && filepath.IsLocal(r) {
			return r, nil
		} else if err == nil && r == "." {
			return ".", nil
		}
	}
	return "", &fs.PathError{Op: "open", Path: name, Err: ErrOutsideRoot}
}

// Contains reports whether name lies under the root.
func (f *Fs) Contains(name string) bool {
	_, err := f.rel(name)
	return err == nil
}

func (f *Fs) Name() string { return "rootfs" }

// Open opens name for reading, following links that stay inside the root:
// a regular file or a directory, never waiting (openIn), so a FIFO at the
// name is a *NotRegularError at once.
func (f *Fs) Open(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens name; with any flag that writes it takes the strict path
// (openWrite). Either way the open goes through openIn: it never waits,
// and takes only a regular file (or, for reading, a directory).
func (f *Fs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	r, err := f.rel(name)
	if err != nil {
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_TRUNC) == 0 {
		file, _, err := openIn(f.root, r, flag, perm, true, false)
		if err != nil {
			return nil, f.pathErr(err, name)
		}
		return file, nil
	}
	file, err := f.openWrite(r, flag, perm)
	if err != nil {
		return nil, f.pathErr(err, name)
	}
	return file, nil
}

func (f *Fs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (f *Fs) Stat(name string) (os.FileInfo, error) {
	r, err := f.rel(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.root.Stat(r)
	return fi, f.pathErr(err, name)
}

// LstatIfPossible is Stat without following a link at the last component.
func (f *Fs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	r, err := f.rel(name)
	if err != nil {
		return nil, true, err
	}
	fi, err := f.root.Lstat(r)
	return fi, true, f.pathErr(err, name)
}

func (f *Fs) Mkdir(name string, perm os.FileMode) error {
	return f.inParent(name, func(d *os.Root, base string) error { return d.Mkdir(base, perm) })
}

// inParent runs op on name's last component in its directory, reached
// through no link.
func (f *Fs) inParent(name string, op func(d *os.Root, base string) error) error {
	r, err := f.rel(name)
	if err != nil {
		return err
	}
	d, done, err := f.dirOf(r, false)
	if err != nil {
		return f.pathErr(err, name)
	}
	defer done()
	return f.pathErr(op(d, filepath.Base(r)), name)
}

func (f *Fs) MkdirAll(name string, perm os.FileMode) error {
	r, err := f.rel(name)
	if err != nil {
		return err
	}
	_, done, err := f.walk(r, true, perm)
	if err != nil {
		return f.pathErr(err, name)
	}
	done()
	return nil
}

// Remove removes name itself (a link, never what it names).
func (f *Fs) Remove(name string) error {
	return f.inParent(name, func(d *os.Root, base string) error { return d.Remove(base) })
}

// RemoveAll removes name and what it holds, without following links.
func (f *Fs) RemoveAll(name string) error {
	r, err := f.rel(name)
	if err != nil {
		return err
	}
	if r == "." {
		return &fs.PathError{Op: "removeall", Path: name, Err: fs.ErrInvalid}
	}
	d, done, err := f.dirOf(r, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return f.pathErr(err, name)
	}
	defer done()
	return f.pathErr(d.RemoveAll(filepath.Base(r)), name)
}

// Rename moves oldname to newname inside the root. A link at newname is
// replaced, never followed; a link on the way to either is refused.
func (f *Fs) Rename(oldname, newname string) error {
	ro, err := f.rel(oldname)
	if err != nil {
		return err
	}
	rn, err := f.rel(newname)
	if err != nil {
		return err
	}
	if err := f.noLinkOnWay(ro); err != nil {
		return f.pathErr(err, oldname)
	}
	if err := f.noLinkOnWay(rn); err != nil {
		return f.pathErr(err, newname)
	}
	return f.linkErr(f.root.Rename(ro, rn), oldname, newname)
}

// linkErr is pathErr for a rename: os.Root's *os.LinkError with the
// caller's two paths in it, which pathErr would have put inside a
// PathError of an "open" nobody made ("open X: renameat a b: …").
func (f *Fs) linkErr(err error, oldname, newname string) error {
	if err == nil {
		return nil
	}
	var le *os.LinkError
	if !errors.As(err, &le) {
		return f.pathErr(err, newname)
	}
	inner := le.Err
	if escapes(inner) {
		inner = fmt.Errorf("%w: %w", ErrLinkOut, inner)
	}
	return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: inner}
}

func (f *Fs) Chmod(name string, mode os.FileMode) error {
	r, err := f.rel(name)
	if err != nil {
		return err
	}
	if err := f.noLink(r); err != nil {
		return f.pathErr(err, name)
	}
	return f.pathErr(f.root.Chmod(r, mode), name)
}

func (f *Fs) Chown(name string, uid, gid int) error {
	r, err := f.rel(name)
	if err != nil {
		return err
	}
	if err := f.noLinkOnWay(r); err != nil {
		return f.pathErr(err, name)
	}
	return f.pathErr(f.root.Lchown(r, uid, gid), name)
}

func (f *Fs) Chtimes(name string, atime, mtime time.Time) error {
	r, err := f.rel(name)
	if err != nil {
		return err
	}
	if err := f.noLink(r); err != nil {
		return f.pathErr(err, name)
	}
	return f.pathErr(f.root.Chtimes(r, atime, mtime), name)
}

// pathErr names the caller's path in err, as the OS file system did, and
// marks os.Root's refusal of a link that leads out of the root with
// ErrLinkOut, so callers can tell it from a file that is missing.
func (f *Fs) pathErr(err error, name string) error {
	if err == nil {
		return nil
	}
	// A file that is not regular is said in one sentence that names it
	// as the caller did, whatever wraps it here.
	var nr *NotRegularError
	if errors.As(err, &nr) {
		return &NotRegularError{Name: name, Mode: nr.Mode, Write: nr.Write}
	}
	op, inner := "open", err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		op, inner = pe.Op, pe.Err
	}
	if escapes(inner) {
		inner = fmt.Errorf("%w: %w", ErrLinkOut, inner)
	}
	return &fs.PathError{Op: op, Path: name, Err: inner}
}

// escapes reports os.Root's error for a path that leads out of the root,
// which the os package does not export.
func escapes(err error) bool {
	for err != nil {
		if err.Error() == "path escapes from parent" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}
