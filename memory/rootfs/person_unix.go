//go:build unix

package rootfs

import (
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens name with flag, failing (ELOOP) when name is a link.
func openNoFollow(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag|syscall.O_NOFOLLOW, perm)
}

// links is how many names the file fi describes has.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
