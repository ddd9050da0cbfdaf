//go:build unix

package git

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeData writes a file whose content is in memory, as writeOne does,
// with the fewest system calls that keep its guarantees: an openat of the
// temporary file (O_EXCL and O_NOFOLLOW: made new, never through a link),
// its writes, its close and its install over the file (on Linux a
// renameat2 that exchanges the two and an unlinkat of the old one), all
// relative to the descriptor of its directory held open (dirFd). Through
// os.Root the same file took eleven (the descriptor's non-blocking mode
// set and unset around a poller that refuses regular files, a look at the
// target before the rename, the process id for the name), which was most
// of an undo of ten thousand files. A symbolic link, and a directory not
// held open, go the portable way.
//
// grown says the file is known to have only gained lines since data was
// its content: it is first tried cut short in place (shrinkInPlace).
func (b *beneath) writeData(path, mode string, data []byte, grown bool) error {
	if mode == "120000" {
		return b.writeOne(path, mode, bytes.NewReader(data), int64(len(data)))
	}
	rel := filepath.Clean(filepath.Dir(filepath.FromSlash(path)))
	d, done, err := b.dir(rel, true)
	if err != nil {
		return err
	}
	defer done()
	f, ok := b.dirFd(rel, d)
	if !ok {
		return b.writeOne(path, mode, bytes.NewReader(data), int64(len(data)))
	}
	dirfd := int(f.Fd())
	name := filepath.Base(filepath.FromSlash(path))
	if grown {
		if done, err := shrinkInPlace(dirfd, name, mode, data); done {
			return err
		}
	}
	tmp := "." + name + b.tmpSuffix
	// As git checkout does: 0666 or 0777, narrowed by the umask.
	perm := uint32(0o666)
	if mode == "100755" {
		perm = 0o777
	}
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := openat(dirfd, tmp, flags, perm)
	if errors.Is(err, unix.EEXIST) {
		// A leftover that removeLeftovers did not see (a link, or one
		// made since) is removed, never written through.
		_ = unix.Unlinkat(dirfd, tmp, 0)
		fd, err = openat(dirfd, tmp, flags, perm)
	}
	if err != nil {
		return &os.PathError{Op: "openat", Path: tmp, Err: err}
	}
	err = writeAll(fd, tmp, data)
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = &os.PathError{Op: "close", Path: tmp, Err: cerr}
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	// The new file replaces a link at name, never what it names; a
	// directory in the file's place fails install, and replaced removes
	// that directory, as git would, and renames again.
	if err := install(dirfd, tmp, name); err != nil {
		return replaced(d, tmp, name, err)
	}
	return nil
}

// openat is unix.Openat, tried again when a signal interrupts it.
func openat(dirfd int, name string, flags int, perm uint32) (fd int, err error) {
	err = ignoringEINTR(func() error {
		fd, err = unix.Openat(dirfd, name, flags, perm)
		return err
	})
	return fd, err
}

// writeAll writes data to fd whole.
func writeAll(fd int, name string, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: name, Err: err}
		}
		data = data[n:]
	}
	return nil
}

// ignoringEINTR runs fn again while a signal interrupts it (Go's runtime
// sends its own to preempt goroutines).
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// removeFile removes the file rel as remove does, with one system call
// where remove made three through os.Root (a look, and a removal that
// tries the name as a file and then as a directory): an unlinkat
// relative to the descriptor of its directory, which removes a symbolic
// link itself and never a directory. A directory in the name's place is
// left, as remove leaves it.
func (b *beneath) removeFile(rel string) error {
	dir := filepath.Clean(filepath.Dir(filepath.FromSlash(rel)))
	d, done, err := b.dir(dir, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errLinkOnPath) {
			return nil
		}
		return err
	}
	defer done()
	f, ok := b.dirFd(dir, d)
	if !ok {
		return b.remove(rel)
	}
	name := filepath.Base(filepath.FromSlash(rel))
	err = ignoringEINTR(func() error { return unix.Unlinkat(int(f.Fd()), name, 0) })
	switch {
	case err == nil, errors.Is(err, unix.ENOENT), errors.Is(err, unix.EISDIR):
		return nil
	case errors.Is(err, unix.EPERM):
		// POSIX's answer for a directory, and Linux's for a file the
		// directory's sticky bit protects: only the first is no error.
		if fi, lerr := d.Lstat(name); lerr == nil && fi.IsDir() {
			return nil
		}
	}
	return &os.PathError{Op: "unlinkat", Path: rel, Err: err}
}
