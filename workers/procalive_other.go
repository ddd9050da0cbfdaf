//go:build !linux

package workers

import (
	"os"
	"syscall"
)

// ProcessAlive reports whether pid is running; without /proc a zombie
// counts as running too. It is for tests, here and in packages built on
// these process groups, that check nothing outlived what was stopped.
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
