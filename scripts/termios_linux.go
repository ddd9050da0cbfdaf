package scripts

import "golang.org/x/sys/unix"

// The ioctl requests that read and set a terminal's modes (askKey).
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
