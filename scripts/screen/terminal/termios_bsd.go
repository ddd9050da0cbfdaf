//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import "golang.org/x/sys/unix"

// The ioctl requests that read and set a terminal's modes: the BSDs and
// macOS name them TIOCGETA and TIOCSETA.
const (
	tcgets = unix.TIOCGETA
	tcsets = unix.TIOCSETA
)
