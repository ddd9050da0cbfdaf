package git

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noExchange says the file system refused RENAME_EXCHANGE once (NFS, an
// old kernel): the rest of the restore renames over.
var noExchange atomic.Bool

// install puts the temporary file tmp, written whole, at name in the
// directory dirfd, atomically: at every moment name is either the file
// that was there or the new one. The two trade places (renameat2 with
// RENAME_EXCHANGE) and the old file, now at tmp, is unlinked. A plain
// rename over the file would do the same in one system call fewer, but
// ext4 (and btrfs) take a rename over an existing file for an atomic
// replace of an edited document and write the new file's data out at the
// rename (ext4's auto_da_alloc), a disk write per file that git checkout,
// which unlinks and creates, does not wait for: it was a third of an undo
// of ten thousand files. Nothing at name (the model removed the file)
// takes the plain rename, which exchanges with nothing.
//
// A directory at name (the model turned the file into one) is traded
// back and left to replaced, which removes it as git would; so is
// anything the old file cannot be unlinked for.
func install(dirfd int, tmp, name string) error {
	if !noExchange.Load() {
		err := ignoringEINTR(func() error { return unix.Renameat2(dirfd, tmp, dirfd, name, unix.RENAME_EXCHANGE) })
		switch {
		case err == nil:
			uerr := ignoringEINTR(func() error { return unix.Unlinkat(dirfd, tmp, 0) })
			if uerr == nil || errors.Is(uerr, unix.ENOENT) {
				return nil
			}
			// The old file stays at tmp, a name the next restore removes
			// (removeLeftovers), unless it goes back to name here.
			if err := ignoringEINTR(func() error { return unix.Renameat2(dirfd, tmp, dirfd, name, unix.RENAME_EXCHANGE) }); err != nil {
				return &os.LinkError{Op: "renameat2", Old: tmp, New: name, Err: err}
			}
			return &os.PathError{Op: "unlinkat", Path: name, Err: uerr}
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
			noExchange.Store(true)
		case !errors.Is(err, unix.ENOENT):
			return &os.LinkError{Op: "renameat2", Old: tmp, New: name, Err: err}
		}
	}
	if err := ignoringEINTR(func() error { return unix.Renameat(dirfd, tmp, dirfd, name) }); err != nil {
		return &os.LinkError{Op: "renameat", Old: tmp, New: name, Err: err}
	}
	return nil
}
