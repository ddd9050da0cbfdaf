//go:build unix && !linux

package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// protocolOut takes standard output for the protocol alone (see the
// Linux file): descriptor 1 becomes standard error.
func protocolOut() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("keep standard output for the protocol: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("point standard output at standard error: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "protocol"), nil
}
