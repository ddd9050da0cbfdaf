//go:build unix && !aix

package memory

import "golang.org/x/sys/unix"

// The Unix systems lock with flock(2), the same call on each: Linux, macOS
// and the BSDs. AIX has no flock and uses the O_EXCL fallback
// (lock_noflock.go).

// tryFlock takes a non-blocking flock (exclusive or shared) on fd. It
// returns errWouldBlock if another open file description holds a
// conflicting lock, and other errors where the filesystem has no flock.
func tryFlock(fd uintptr, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		switch err := unix.Flock(int(fd), how|unix.LOCK_NB); err {
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return errWouldBlock
		default:
			return err
		}
	}
}

func unflock(fd uintptr) { _ = unix.Flock(int(fd), unix.LOCK_UN) }
