//go:build unix && !linux

package git

import (
	"os"
	"syscall"
)

// terminate asks a git to end; git removes its lock files on SIGTERM.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
