package repl

import "golang.org/x/sys/unix"

// wakePipe makes the non-blocking pipe that wakes a pending read, in one
// call.
func wakePipe() ([2]int, error) {
	var p [2]int
	err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK)
	return p, err
}
