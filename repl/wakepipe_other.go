//go:build unix && !linux

package repl

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// wakePipe makes the non-blocking pipe that wakes a pending read. macOS
// and the BSDs have no pipe2, so the flags are set after pipe(2); the
// moment in between only matters to a fork from another goroutine, and Go
// holds syscall.ForkLock around its own forks.
func wakePipe() ([2]int, error) {
	var p [2]int
	syscall.ForkLock.RLock()
	err := unix.Pipe(p[:])
	if err == nil {
		unix.CloseOnExec(p[0])
		unix.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return p, err
	}
	for _, fd := range p {
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return p, err
		}
	}
	return p, nil
}
