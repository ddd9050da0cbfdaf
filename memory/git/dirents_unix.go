//go:build unix

package git

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// readDirTyped lists the directory f, which was opened in an os.Root,
// with each entry's type as the directory itself gives it. ReadDir of a
// file opened in a root lstats every entry (it may not look a name up
// lazily by path), and the guard reads the objects directory, 256
// fan-out directories, before every checkpoint: in a long run those
// lstats were an eighth of ralph's CPU. A duplicate of f's descriptor is
// the same directory, not opened again by name, so nothing is resolved
// anew; where the file system gives no type, Go looks at the entry
// relative to that descriptor, following no link.
func readDirTyped(f *os.File) ([]fs.DirEntry, error) {
	fd, err := dupCloexec(int(f.Fd()))
	if err != nil {
		return f.ReadDir(-1)
	}
	d := os.NewFile(uintptr(fd), f.Name())
	defer d.Close()
	return d.ReadDir(-1)
}

// dupCloexec duplicates fd with close-on-exec set in the same system
// call (F_DUPFD_CLOEXEC), so that no git ralph starts meanwhile inherits
// it. It takes no lock: a dup then a CloseOnExec needed syscall.ForkLock
// for reading, and a reader waiting on it while a fork of ralph's held it
// kept every later fork waiting too, the checkpoint's own git among them
// (a checkpoint that had stopped that fork's child never ended).
func dupCloexec(fd int) (int, error) {
	for {
		nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		return nfd, err
	}
}
