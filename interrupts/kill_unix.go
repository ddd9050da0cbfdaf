//go:build unix

package interrupts

import (
	"os"
	"syscall"
)

// Kill sends sig to the process pid.
func Kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// raise ends this process by sig, exactly as an unhandled one would; the
// caller has reset sig to its default effect.
func raise(sig syscall.Signal) { _ = syscall.Kill(os.Getpid(), sig) }
