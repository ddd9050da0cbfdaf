package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// protocolOut takes standard output for the protocol alone: the
// protocol gets a copy of it, and descriptor 1 (os.Stdout, and every
// child's inherited standard output) becomes standard error, so no
// stray line of ralph's or of a program it starts can reach the editor.
func protocolOut() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("keep standard output for the protocol: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup3(2, 1, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("point standard output at standard error: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "protocol"), nil
}
