//go:build unix

package workers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// RootDir is the project root held open for one file operation.
type RootDir struct {
	w  *Workspace
	fd int

	// configs are the identities of the project repository's
	// configuration files and their includes (isProjectConfig), found
	// once per operation: a search opens every file of the tree.
	configsOnce sync.Once
	configs     map[fileID]bool
}

// fileID is a file's identity: its device and inode.
type fileID struct{ dev, ino uint64 }

// OpenRoot opens the project root directory for one operation. The caller
// closes it.
func (w *Workspace) OpenRoot() (*RootDir, error) {
	fd, err := unix.Open(w.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the project root: %w", &fs.PathError{Op: "open", Path: w.root, Err: err})
	}
	return &RootDir{w: w, fd: fd}, nil
}

func (r *RootDir) Close() { unix.Close(r.fd) }

// open opens rel, a clean path relative to the root ("." is the root
// itself), following symlinks only as long as they stay inside the root.
// A path that leaves the root wraps ErrOutsideRoot.
func (r *RootDir) open(rel string, flags int) (int, error) {
	fd, err := r.openBeneath(rel, flags)
	if err != nil || len(r.w.kept) == 0 && !r.w.opts.Door.Denies() {
		return fd, err
	}
	// Where the file really is, as the kernel opened it: a link inside
	// the root that leads into a kept path is refused as the path is.
	if r.w.Kept(filepath.Join(r.w.root, rel)) {
		unix.Close(fd)
		return -1, r.w.keptErr(rel, filepath.Join(r.w.root, rel))
	}
	abs, ok := fdPath(fd)
	if !ok {
		if abs, err = evalExisting(filepath.Join(r.w.root, rel)); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if r.w.Kept(abs) {
		unix.Close(fd)
		return -1, r.w.keptErr(rel, abs)
	}
	return fd, nil
}

// openBeneath is open without the kept paths' check.
func (r *RootDir) openBeneath(rel string, flags int) (int, error) {
	flags |= unix.O_CLOEXEC
	if hasOpenat2() {
		fd, err := openat2Beneath(r.fd, rel, flags)
		if !errors.Is(err, unix.EXDEV) {
			return fd, wrapOpenErr(rel, err)
		}
		// RESOLVE_BENEATH refuses every absolute symlink, even one that
		// names a place inside the root. Resolve it in user space once and
		// let the kernel check the result, which has no symlinks left.
		real, rerr := evalExisting(filepath.Join(r.w.root, rel))
		if rerr != nil || !isInside(r.w.root, real) {
			return -1, fmt.Errorf("%w: %s", ErrOutsideRoot, rel)
		}
		realRel, _ := filepath.Rel(r.w.root, real)
		if realRel == rel {
			return -1, fmt.Errorf("%w: %s", ErrOutsideRoot, rel)
		}
		fd, err = openat2Beneath(r.fd, realRel, flags)
		if errors.Is(err, unix.EXDEV) {
			return -1, fmt.Errorf("%w: %s", ErrOutsideRoot, rel)
		}
		return fd, wrapOpenErr(rel, err)
	}
	real, err := evalExisting(filepath.Join(r.w.root, rel))
	if err != nil {
		return -1, err
	}
	if !isInside(r.w.root, real) {
		return -1, fmt.Errorf("%w: %s", ErrOutsideRoot, rel)
	}
	fd, err := unix.Open(real, flags, 0)
	return fd, wrapOpenErr(rel, err)
}

func wrapOpenErr(rel string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: "open", Path: rel, Err: err}
}

// stat describes rel, beneath the root, without opening the file itself
// for reading.
func (r *RootDir) stat(rel string, st *unix.Stat_t) error {
	if hasOpenat2() {
		fd, err := r.open(rel, oPath)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Fstat(fd, st)
	}
	real, err := evalExisting(filepath.Join(r.w.root, rel))
	if err != nil {
		return err
	}
	if !isInside(r.w.root, real) {
		return fmt.Errorf("%w: %s", ErrOutsideRoot, rel)
	}
	if err := unix.Stat(real, st); err != nil {
		return &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	return nil
}

// where returns the path of the open directory dirfd relative to the root,
// as the kernel sees it now; asked is the path it was opened by, used where
// the kernel cannot say (no /proc).
func (r *RootDir) where(dirfd int, asked string) (string, error) {
	abs, ok := fdPath(dirfd)
	if !ok {
		real, err := evalExisting(filepath.Join(r.w.root, asked))
		if err != nil {
			return "", err
		}
		abs = real
	}
	if !isInside(r.w.root, abs) {
		return "", fmt.Errorf("%w: %s", ErrOutsideRoot, asked)
	}
	rel, _ := filepath.Rel(r.w.root, abs)
	return rel, nil
}

// OpenFile opens rel for reading and checks that it is a regular file; a
// repository's configuration comes back masked (maskConfig).
// O_NONBLOCK keeps a fifo from blocking the open; it means nothing for the
// regular files that pass the check.
func (r *RootDir) OpenFile(rel string) (*os.File, error) {
	// Look before opening: opening a device can have effects of its own
	// (a tape rewinds) and opening a socket fails with a puzzling ENXIO.
	// The type is checked again on the open file, in case it was swapped.
	var st unix.Stat_t
	if err := r.stat(rel, &st); err != nil {
		return nil, err
	}
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return nil, &fs.PathError{Op: "open", Path: rel, Err: unix.EISDIR}
	default:
		return nil, ErrNotRegular
	}
	fd, err := r.open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if errors.Is(err, unix.ENXIO) {
		return nil, ErrNotRegular
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(r.w.root, rel))
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, err
	case fi.IsDir():
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: rel, Err: unix.EISDIR}
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, ErrNotRegular
	}
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	return r.maskConfig(f, rel, &st)
}

// Target is where a write lands: an open directory inside the root and a
// name in it. Resolving a path to a target follows symlinks (writing
// through a symlink changes the file it names, as editors do) but lands
// the bytes by renaming inside that directory, so a symlink swapped in at
// the last moment is replaced, never followed out of the root.
type Target struct {
	w      *Workspace
	dir    int    // the directory, opened beneath the root
	dirRel string // that directory relative to the root, as the kernel sees it
	name   string
	mode   uint32 // permission bits of the file it replaces, or 0644
	exists bool
	linked bool // the name rel ended in was a symbolic link, followed
}

func (tg Target) Close() { unix.Close(tg.dir) }

// key names the file for the per-path write lock, however it was spelled.
func (tg Target) key(root string) string { return filepath.Join(root, tg.dirRel, tg.name) }

// WriteTarget resolves rel for a write. With create, missing directories
// are made (never inside .git, .ralph or another git directory) and a
// missing file is a target with exists false; without it a missing file
// is fs.ErrNotExist. A file in a git directory of any name, or one git
// reads as a repository's configuration, is a GitDirError (gitdirs.go).
func (r *RootDir) WriteTarget(rel string, create bool) (Target, error) {
	for hops := 0; ; hops++ {
		if hops > maxSymlinkHops {
			return Target{}, &fs.PathError{Op: "open", Path: rel, Err: unix.ELOOP}
		}
		if IsProtected(rel) {
			return Target{}, ErrProtected
		}
		dirRel, name := filepath.Dir(rel), filepath.Base(rel)
		if rel == "." {
			return Target{}, &fs.PathError{Op: "write", Path: rel, Err: unix.EISDIR}
		}
		dir, err := r.openDir(dirRel, create)
		if err != nil {
			return Target{}, err
		}
		tg := Target{w: r.w, dir: dir, name: name, mode: 0o644, linked: hops > 0}
		if tg.dirRel, err = r.where(dir, dirRel); err != nil {
			tg.Close()
			return Target{}, err
		}
		if IsProtected(filepath.Join(tg.dirRel, name)) {
			tg.Close()
			return Target{}, ErrProtected
		}
		if kp := filepath.Join(r.w.root, tg.dirRel, name); r.w.Kept(kp) {
			tg.Close()
			return Target{}, r.w.keptErr(rel, kp)
		}
		if err := r.w.gitDirCheck(tg.dirRel, name); err != nil {
			tg.Close()
			return Target{}, err
		}
		var st unix.Stat_t
		err = unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT) && create:
			return tg, nil
		case err != nil:
			tg.Close()
			return Target{}, &fs.PathError{Op: "stat", Path: rel, Err: err}
		}
		switch uint32(st.Mode) & unix.S_IFMT {
		case unix.S_IFREG:
			tg.mode, tg.exists = uint32(st.Mode)&0o7777, true
			return tg, nil
		case unix.S_IFDIR:
			tg.Close()
			return Target{}, &fs.PathError{Op: "write", Path: rel, Err: unix.EISDIR}
		case unix.S_IFLNK:
			next, err := r.followLink(dir, tg.dirRel, name)
			tg.Close()
			if err != nil {
				return Target{}, err
			}
			rel = next
		default:
			tg.Close()
			return Target{}, ErrNotRegular
		}
	}
}

// followLink reads the symlink name in dir (at dirRel) and returns where it
// points, relative to the root.
func (r *RootDir) followLink(dir int, dirRel, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: filepath.Join(dirRel, name), Err: err}
	}
	dest := string(buf[:n])
	var abs string
	if filepath.IsAbs(dest) {
		abs = filepath.Clean(dest)
		if !isInside(r.w.root, abs) && isInside(r.w.rootLex, abs) {
			rest, _ := filepath.Rel(r.w.rootLex, abs)
			abs = filepath.Join(r.w.root, rest)
		}
	} else {
		abs = filepath.Join(r.w.root, dirRel, dest)
	}
	if !isInside(r.w.root, abs) {
		return "", fmt.Errorf("%w: %s", ErrOutsideRoot, filepath.Join(dirRel, name))
	}
	rel, _ := filepath.Rel(r.w.root, abs)
	return rel, nil
}

// openDir opens the directory rel beneath the root, making it and its
// missing parents when create is set. Each directory is made through its
// parent's descriptor after checking where that parent really is, so no
// directory appears inside .git or .ralph.
func (r *RootDir) openDir(rel string, create bool) (int, error) {
	fd, err := r.open(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err == nil || !create || rel == "." || !errors.Is(err, unix.ENOENT) {
		return fd, err
	}
	parent, err := r.openDir(filepath.Dir(rel), true)
	if err != nil {
		return -1, err
	}
	parentRel, err := r.where(parent, filepath.Dir(rel))
	if err == nil && IsProtected(filepath.Join(parentRel, filepath.Base(rel))) {
		err = ErrProtected
	}
	if kp := filepath.Join(r.w.root, parentRel, filepath.Base(rel)); err == nil && r.w.Kept(kp) {
		err = r.w.keptErr(rel, kp)
	}
	if err == nil {
		// No directory is made in a git directory either.
		err = r.w.gitDirCheck(parentRel, filepath.Base(rel))
	}
	if err == nil {
		if merr := unix.Mkdirat(parent, filepath.Base(rel), 0o755); merr != nil && !errors.Is(merr, unix.EEXIST) {
			err = &fs.PathError{Op: "mkdir", Path: rel, Err: merr}
		}
	}
	unix.Close(parent)
	if err != nil {
		return -1, err
	}
	return r.open(rel, unix.O_RDONLY|unix.O_DIRECTORY)
}

// writeDisk replaces the target's file with data so that readers see
// either the old or the new content, never a partial file: a temporary
// file made with O_EXCL|O_NOFOLLOW in the same directory is written,
// synced and renamed over the name. The replaced file's permissions are
// kept. Content above MaxEditFile is refused before anything is written.
// The tools reach it only through Write (editorroute.go).
func (tg Target) writeDisk(data []byte) (err error) {
	if err := CheckWriteSize(len(data)); err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := ".ralph-write-" + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := unix.Openat(tg.dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: tg.name, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer func() {
		if err != nil {
			f.Close()
			unix.Unlinkat(tg.dir, tmp, 0)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	// fchmod, unlike the mode given to open, is not narrowed by the umask,
	// so the replacement has exactly the old file's bits.
	if err = unix.Fchmod(fd, tg.mode); err != nil {
		return &fs.PathError{Op: "chmod", Path: tg.name, Err: err}
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = unix.Renameat(tg.dir, tmp, tg.dir, tg.name); err != nil {
		return &fs.PathError{Op: "rename", Path: tg.name, Err: err}
	}
	// Sync the directory so the rename itself survives a crash. Failure here
	// does not undo the write, so it is not reported.
	_ = unix.Fsync(tg.dir)
	return nil
}

// Remove deletes the target's file, by its name in its directory; a
// directory is not removed.
func (tg Target) Remove() error {
	if err := unix.Unlinkat(tg.dir, tg.name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: tg.name, Err: err}
	}
	_ = unix.Fsync(tg.dir)
	return nil
}

// readDisk returns the content of the target's existing file, at most
// MaxEditFile of it (a larger one is a SizeError), opened through its
// directory without following a symlink swapped in since it was
// resolved. The tools reach it only through Read (editorroute.go).
func (tg Target) readDisk() ([]byte, error) {
	fd, err := unix.Openat(tg.dir, tg.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENXIO) {
		return nil, ErrNotRegular
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: tg.name, Err: err}
	}
	f := os.NewFile(uintptr(fd), tg.name)
	defer f.Close()
	return readRegular(f)
}

// sameDir reports whether the directory at abs (not followed if it is a
// link) is the one the target holds open: a directory swapped since the
// target was resolved is not.
func (tg Target) sameDir(abs string) bool {
	var open, now unix.Stat_t
	if unix.Fstat(tg.dir, &open) != nil || unix.Lstat(abs, &now) != nil {
		return false
	}
	return open.Dev == now.Dev && open.Ino == now.Ino
}

// beneathFS is the project as an fs.FS whose every Open resolves beneath
// the root.
type beneathFS struct{ r *RootDir }

func (b beneathFS) Open(name string) (fs.File, error) {
	fd, err := b.r.open(filepath.FromSlash(name), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(b.r.w.root, filepath.FromSlash(name))), nil
}
