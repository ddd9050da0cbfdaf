//go:build unix

package git

import (
	"io/fs"
	"os"
	"syscall"
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

// dupCloexec duplicates fd with close-on-exec set, so that no git ralph
// starts meanwhile inherits it.
func dupCloexec(fd int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	nfd, err := syscall.Dup(fd)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(nfd)
	return nfd, nil
}
