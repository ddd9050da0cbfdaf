//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package terminal

import "time"

// ReadWait is not done here: the Windows console is read through an API
// of its own (chat's input_windows.go), and questions there are answered
// with a line (OneKey is false).
func ReadWait(fd, wake int, buf []byte, timeout time.Duration) (int, error) {
	return 0, ErrNoKeyMode
}
