//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package repl

import "golang.org/x/sys/unix"

// tcgets is the ioctl that reads a terminal's modes; the BSDs call it
// TIOCGETA.
const tcgets = unix.TIOCGETA
