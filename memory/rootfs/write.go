package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// walk opens the directory rel (relative to the root, "." for the root
// itself) one component at a time, refusing a symlink in any of them. With
// create, missing directories are made with perm. done releases the
// directory returned.
func (f *Fs) walk(rel string, create bool, perm os.FileMode) (d *os.Root, done func(), err error) {
	d, done = f.root, func() {}
	if rel == "." {
		return d, done, nil
	}
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		next, err := step(d, name, create, perm)
		done()
		if err != nil {
			return nil, nil, err
		}
		d, done = next, func() { _ = next.Close() }
	}
	return d, done, nil
}

// step opens the directory name inside d, which must be a directory and
// no link; with create a missing one is made first.
func step(d *os.Root, name string, create bool, perm os.FileMode) (*os.Root, error) {
	fi, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := d.Mkdir(name, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fi, err = d.Lstat(name)
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrLink)
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a directory")}
	}
	next, err := d.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	// A link swapped in between the look and the open was followed, if
	// only inside d: the directory opened must be the one seen.
	if now, err := next.Stat("."); err != nil || !os.SameFile(now, fi) {
		_ = next.Close()
		return nil, fmt.Errorf("%s: %w", name, ErrLink)
	}
	return next, nil
}

// dirOf opens the directory holding rel, refusing links on the way.
func (f *Fs) dirOf(rel string, create bool) (*os.Root, func(), error) {
	if rel == "." {
		return nil, nil, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrInvalid}
	}
	return f.walk(filepath.Dir(rel), create, 0o755)
}

// noLinkOnWay checks that no directory on the way to rel is a link.
func (f *Fs) noLinkOnWay(rel string) error {
	if rel == "." {
		return nil
	}
	_, done, err := f.dirOf(rel, false)
	if err != nil {
		return err
	}
	done()
	return nil
}

// noLink checks that neither rel nor a directory on the way is a link.
func (f *Fs) noLink(rel string) error {
	if err := f.noLinkOnWay(rel); err != nil {
		return err
	}
	if rel == "." {
		return nil
	}
	fi, err := f.root.Lstat(rel)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w", rel, ErrLink)
	}
	return nil
}

// openWrite opens rel for writing (or appending, or creating) with no
// link anywhere on the path: a new file is created with O_EXCL, which
// never follows a link, and an existing one must still be the file looked
// at once it is open, before anything is written or truncated.
func (f *Fs) openWrite(rel string, flag int, perm os.FileMode) (*os.File, error) {
	d, done, err := f.dirOf(rel, false)
	if err != nil {
		return nil, err
	}
	defer done()
	name := filepath.Base(rel)
	fi, err := d.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if flag&os.O_CREATE == 0 {
			return nil, err
		}
		file, _, err := openIn(d, name, flag|os.O_EXCL, perm, false, true)
		return file, err
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s: %w", rel, ErrLink)
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrExist}
	}
	// A FIFO, socket or device is refused by its look, and, should one be
	// swapped in after the look, by what the open found (openIn): an open
	// for writing of a FIFO nobody reads would wait for ever.
	if err := notRegular(rel, fi, true); err != nil {
		return nil, err
	}
	file, now, err := openIn(d, name, flag&^(os.O_CREATE|os.O_TRUNC), perm, false, true)
	if err != nil {
		return nil, err
	}
	if !os.SameFile(now, fi) {
		_ = file.Close()
		return nil, fmt.Errorf("%s: %w", rel, ErrLink)
	}
	// A file with another name is written in place through every name:
	// a command that hard-linked one of the person's files (~/.bashrc)
	// at a name ralph appends to or rewrites in place would have ralph
	// write into it. A file ralph replaces by renaming is not concerned
	// (the rename breaks the link), so only this door refuses.
	if links(now) > 1 {
		_ = file.Close()
		return nil, fmt.Errorf("%s: %w", rel, ErrHardLink)
	}
	if flag&os.O_TRUNC != 0 {
		if err := file.Truncate(0); err != nil {
			_ = file.Close()
			return nil, err
		}
	}
	return file, nil
}
