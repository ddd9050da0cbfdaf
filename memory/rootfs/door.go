package rootfs

import (
	"io/fs"
	"os"
	"syscall"
)

// openIn is the one place this package opens a file under a project (the
// guard TestEveryOpenGoesThroughTheDoor holds every other function of the
// package to it). A command can put a FIFO, a socket or a device at any
// name ralph keeps its files under (RALPH_PROGRESS.md, .ralph/session.lock,
// .ralph/.gitignore): a FIFO's open waits for a writer (or a reader) that
// never comes, and a read waits for bytes that never come, so ralph hung
// for ever. So the open never waits (O_NONBLOCK: an open for reading
// returns at once, one for writing fails with ENXIO when no reader is
// there), and what was opened is looked at before anything is read or
// written: nothing but a regular file is taken, or a directory where dir
// says so; anything else is closed and refused as a *NotRegularError. On a
// regular file O_NONBLOCK changes nothing.
//
// write says the caller means to write (it names the refusal: "did not
// write to it").
func openIn(d *os.Root, name string, flag int, perm os.FileMode, dir, write bool) (*os.File, fs.FileInfo, error) {
	file, err := d.OpenFile(name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, nil, err
	}
	fi, err := file.Stat()
	if err != nil {
		_ = file.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() && !(dir && fi.IsDir()) {
		_ = file.Close()
		return nil, nil, &NotRegularError{Name: name, Mode: fi.Mode(), Write: write}
	}
	return file, fi, nil
}

// notRegular refuses, before any open, a name whose look (Lstat) found
// something other than a regular file where ralph writes one: open would
// not wait on it, but a one-sentence refusal that names it says more than
// ENXIO.
func notRegular(name string, fi fs.FileInfo, write bool) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Name: name, Mode: fi.Mode(), Write: write}
}

// openPerson is the same door for a file of the person's own that ralph
// writes (PersonFs.OpenFile), named by its path: no link is followed at
// name, the open never waits (a FIFO a command put in a directory it can
// write, a cache say, fails with ENXIO or is refused), and an existing
// file must be a regular file with no other name (soleRegular) unless
// the open made it (O_CREATE|O_EXCL).
func openPerson(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := openNoFollow(name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		if isLinkErr(name, err) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: ErrLink}
		}
		return nil, err
	}
	if flag&(os.O_CREATE|os.O_EXCL) != os.O_CREATE|os.O_EXCL {
		if err := soleRegular(f); err != nil {
			_ = f.Close()
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	return f, nil
}
