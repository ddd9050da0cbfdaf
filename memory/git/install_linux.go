package git

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// exchangeAt is rootfs's, a variable so that a test can have the file
// system refuse it.
var exchangeAt = rootfs.ExchangeAt

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
	err := exchangeAt(dirfd, tmp, name)
	switch {
	case err == nil:
		uerr := ignoringEINTR(func() error { return unix.Unlinkat(dirfd, tmp, 0) })
		if uerr == nil || errors.Is(uerr, unix.ENOENT) {
			return nil
		}
		// The old file stays at tmp, a name the next restore removes
		// (removeLeftovers), unless it goes back to name here.
		if err := exchangeAt(dirfd, tmp, name); err != nil {
			return err
		}
		return &os.PathError{Op: "unlinkat", Path: name, Err: uerr}
	case errors.Is(err, rootfs.ErrNoExchange), errors.Is(err, unix.ENOENT):
		// No exchange here, or nothing at name to exchange with.
	default:
		return err
	}
	if err := ignoringEINTR(func() error { return unix.Renameat(dirfd, tmp, dirfd, name) }); err != nil {
		return &os.LinkError{Op: "renameat", Old: tmp, New: name, Err: err}
	}
	return nil
}
