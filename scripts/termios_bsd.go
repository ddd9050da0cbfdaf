//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package scripts

import "golang.org/x/sys/unix"

// The ioctl requests that read and set a terminal's modes (askKey): the
// BSDs and macOS name them TIOCGETA and TIOCSETA.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
