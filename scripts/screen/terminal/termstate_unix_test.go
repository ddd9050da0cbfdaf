//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// termState is a terminal's input and local modes, to compare.
func termState(f *os.File) (string, error) {
	tio, err := unix.IoctlGetTermios(int(f.Fd()), tcgets)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("iflag=%#x lflag=%#x oflag=%#x", tio.Iflag, tio.Lflag, tio.Oflag), nil
}
