//go:build unix

package workers

import "syscall"

// signalGroup sends sig to every process of the group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// groupStarted has nothing to do on Unix: the kernel made the group when
// the command started (Setpgid).
func groupStarted(pid int) error { return nil }
