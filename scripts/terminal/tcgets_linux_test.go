package terminal

import "golang.org/x/sys/unix"

// tcgets is the ioctl that reads a terminal's modes.
const tcgets = unix.TCGETS
