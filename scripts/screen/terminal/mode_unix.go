//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// OneKey reports whether a terminal here can be read one key at a time
// (Cbreak and ReadWait).
const OneKey = true

// modes are the terminal's termios.
type modes = unix.Termios

func getModes(fd int) (modes, error) {
	t, err := unix.IoctlGetTermios(fd, tcgets)
	if err != nil {
		return modes{}, fmt.Errorf("read the terminal's modes: %w", err)
	}
	return *t, nil
}

func setModes(fd int, m modes) error {
	if err := unix.IoctlSetTermios(fd, tcsets, &m); err != nil {
		return fmt.Errorf("set the terminal's modes: %w", err)
	}
	return nil
}

// makeRaw is cfmakeraw(3) but for OPOST, as readline's raw mode is.
func makeRaw(fd int, t modes) error {
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return setModes(fd, t)
}

func makeCbreak(fd int, t modes) error {
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return setModes(fd, t)
}
