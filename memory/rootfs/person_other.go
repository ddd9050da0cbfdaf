//go:build !unix

package rootfs

import (
	"fmt"
	"io/fs"
	"os"
)

// openNoFollow opens name with flag after making sure name is no link:
// without O_NOFOLLOW the look and the open are two steps.
func openNoFollow(name string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrLink)
	}
	return os.OpenFile(name, flag, perm)
}

// links is how many names the file has; the OS file info does not say.
func links(fs.FileInfo) uint64 { return 1 }
