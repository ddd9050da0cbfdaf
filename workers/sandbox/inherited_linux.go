package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// sealInherited uses close_range(2) with CLOSE_RANGE_CLOEXEC (Linux 5.11)
// and walks /proc/self/fd where the kernel lacks it.
func sealInherited() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("cannot mark inherited descriptors close-on-exec: %w", err)
	}
	return sealListed("/proc/self/fd")
}
