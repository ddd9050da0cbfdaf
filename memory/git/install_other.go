//go:build unix && !linux

package git

import (
	"os"

	"golang.org/x/sys/unix"
)

// install puts the temporary file tmp, written whole, at name in the
// directory dirfd with one rename over it: atomic, and it replaces a link
// at name, never what it names (see install_linux.go for why Linux
// exchanges them instead).
func install(dirfd int, tmp, name string) error {
	if err := ignoringEINTR(func() error { return unix.Renameat(dirfd, tmp, dirfd, name) }); err != nil {
		return &os.LinkError{Op: "renameat", Old: tmp, New: name, Err: err}
	}
	return nil
}
