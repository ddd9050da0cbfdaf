package workers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// On Windows the file tools resolve a path in user space first, as the
// fallback on Unix does (evalExisting), and check the result against the
// root; then they open it through an os.Root held on the project root. Go's
// Root opens each component relative to its parent's handle and refuses one
// that leads out of the root, so a directory swapped for a link or a
// junction between the check and the use fails instead of leaving the
// project.

// RootDir is the project root held open for one file operation.
type RootDir struct {
	w    *Workspace
	root *os.Root
}

// OpenRoot opens the project root directory for one operation. The caller
// closes it.
func (w *Workspace) OpenRoot() (*RootDir, error) {
	r, err := os.OpenRoot(w.root)
	if err != nil {
		return nil, fmt.Errorf("open the project root: %w", err)
	}
	return &RootDir{w: w, root: r}, nil
}

func (r *RootDir) Close() { r.root.Close() }

// resolve returns rel, a clean path relative to the root, with its links
// resolved as far as it exists, still relative to the root; a path that
// leaves the root wraps ErrOutsideRoot.
func (r *RootDir) resolve(rel string) (string, error) {
	real, err := evalExisting(filepath.Join(r.w.root, rel))
	if err != nil {
		return "", err
	}
	if !isInside(r.w.root, real) {
		return "", fmt.Errorf("%w: %s", ErrOutsideRoot, rel)
	}
	realRel, _ := filepath.Rel(r.w.root, real)
	return realRel, nil
}

// OpenFile opens rel for reading and checks that it is a regular file,
// before opening and again on the open file, in case it was swapped.
func (r *RootDir) OpenFile(rel string) (*os.File, error) {
	realRel, err := r.resolve(rel)
	if err != nil {
		return nil, err
	}
	fi, err := r.root.Lstat(realRel)
	if err != nil {
		return nil, err
	}
	if err := regularFile(rel, fi); err != nil {
		return nil, err
	}
	f, err := r.root.Open(realRel)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = regularFile(rel, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// regularFile says why fi, the file at rel, is not one the tools read.
func regularFile(rel string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return &fs.PathError{Op: "open", Path: rel, Err: syscall.EISDIR}
	case !fi.Mode().IsRegular():
		return ErrNotRegular
	}
	return nil
}

// Target is where a write lands: a directory inside the root and a name
// in it, with links resolved. The bytes land by a rename inside the root's
// handle (see write).
type Target struct {
	w      *Workspace
	root   *os.Root
	dirRel string // the directory relative to the root, links resolved
	name   string
	exists bool
	linked bool // the name rel ended in was a symbolic link, followed
}

func (tg Target) Close() {}

// Remove deletes the target's file; a directory is not removed.
func (tg Target) Remove() error {
	fi, err := tg.root.Lstat(filepath.Join(tg.dirRel, tg.name))
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return &fs.PathError{Op: "remove", Path: tg.name, Err: syscall.EISDIR}
	}
	return tg.root.Remove(filepath.Join(tg.dirRel, tg.name))
}

// key names the file for the per-path write lock, however it was spelled.
func (tg Target) key(root string) string { return filepath.Join(root, tg.dirRel, tg.name) }

// WriteTarget resolves rel for a write. With create, missing directories
// are made (never inside .git or .ralph) and a missing file is a target
// with exists false; without it a missing file is fs.ErrNotExist.
func (r *RootDir) WriteTarget(rel string, create bool) (Target, error) {
	if IsProtected(rel) {
		return Target{}, ErrProtected
	}
	realRel, err := r.resolve(rel)
	if err != nil {
		return Target{}, err
	}
	if IsProtected(realRel) {
		return Target{}, ErrProtected
	}
	if realRel == "." {
		return Target{}, &fs.PathError{Op: "write", Path: rel, Err: syscall.EISDIR}
	}
	if err := r.w.gitDirCheck(filepath.Dir(realRel), filepath.Base(realRel)); err != nil {
		return Target{}, err
	}
	tg := Target{w: r.w, root: r.root, dirRel: filepath.Dir(realRel), name: filepath.Base(realRel)}
	if fi, err := r.root.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		tg.linked = true
	}
	fi, err := r.root.Lstat(realRel)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		if err := r.root.MkdirAll(tg.dirRel, 0o755); err != nil {
			return Target{}, err
		}
		return tg, nil
	case err != nil:
		return Target{}, err
	case fi.IsDir():
		return Target{}, &fs.PathError{Op: "write", Path: rel, Err: syscall.EISDIR}
	case !fi.Mode().IsRegular():
		return Target{}, ErrNotRegular
	}
	tg.exists = true
	return tg, nil
}

// writeDisk replaces the target's file with data so that readers see
// either the old or the new content, never a partial file: a new
// temporary file in the same directory is written, synced and renamed
// over the name. Windows keeps no Unix permission bits to carry over.
// The tools reach it only through Write (editorroute.go).
func (tg Target) writeDisk(data []byte) (err error) {
	if err := CheckWriteSize(len(data)); err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(tg.dirRel, ".ralph-write-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := tg.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			tg.root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return tg.root.Rename(tmp, filepath.Join(tg.dirRel, tg.name))
}

// readDisk returns the content of the target's existing file, at most
// MaxEditFile of it (a larger one is a SizeError). The tools reach it
// only through Read (editorroute.go).
func (tg Target) readDisk() ([]byte, error) {
	f, err := tg.root.Open(filepath.Join(tg.dirRel, tg.name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f)
}

// sameDir reports whether the directory at abs is the one the target
// names: the root's handle resolves every component again, so the name
// is all there is to compare, and the links of the path are checked
// component by component (noLinkIn) before the editor is asked.
func (tg Target) sameDir(abs string) bool {
	fi, err := tg.root.Lstat(tg.dirRel)
	return err == nil && fi.IsDir()
}

// beneathFS is the project as an fs.FS whose every Open resolves beneath
// the root.
type beneathFS struct{ r *RootDir }

func (b beneathFS) Open(name string) (fs.File, error) {
	return b.r.root.Open(filepath.FromSlash(name))
}
