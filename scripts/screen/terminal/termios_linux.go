package terminal

import "golang.org/x/sys/unix"

// The ioctl requests that read and set a terminal's modes.
const (
	tcgets = unix.TCGETS
	tcsets = unix.TCSETS
)
