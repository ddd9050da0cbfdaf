//go:build unix

package e2e

import "syscall"

// The process primitives the tests need from Unix: signals to a process
// or to its whole group, and how a child starts (as another user, in a
// group of its own, as the leader of a terminal's session). They are kept
// here so that the rest of the package type-checks for Windows
// (proc_windows_test.go says why they cannot work there).

// signalProcess sends sig to pid; signal 0 probes whether it exists.
func signalProcess(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// signalGroup sends sig to every process of the group pgid; signal 0
// probes whether the group has a member left (syscall.ESRCH: none).
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// asUser makes a child run as uid and gid (the tests run as root).
func asUser(uid, gid uint32) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
}

// inOwnGroup makes a child the leader of a process group of its own, so
// that signalGroup reaches everything it starts.
func inOwnGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// onTerminal makes a child the leader of a new session whose controlling
// terminal is its standard input, as a shell starts a program.
func onTerminal() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true, Setctty: true} }
