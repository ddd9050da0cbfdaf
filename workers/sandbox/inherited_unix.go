//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// sealListed marks close-on-exec every descriptor from 3 up that the
// directory dir lists (/proc/self/fd, /dev/fd). The directory's own
// descriptor is listed too and is closed anyway when the listing ends.
func sealListed(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cannot list inherited descriptors: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// EBADF is the listing's own descriptor, closed since.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("cannot mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}
