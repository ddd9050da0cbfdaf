package memory

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// sZomb is the state of a process that has exited but is not reaped
// (SZOMB in sys/proc.h).
const sZomb = 5

// procStat reads a process's start time (microseconds since the epoch:
// macOS has no /proc, and the kernel's process table gives the time of
// day) and state, 'Z' for a zombie, from sysctl kern.proc.pid.
func procStat(pid int) (start uint64, state byte, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		if !pidExists(pid) {
			return 0, 0, fmt.Errorf("process %d: %w", pid, os.ErrNotExist)
		}
		return 0, 0, fmt.Errorf("process %d: %w", pid, err)
	}
	state = 'R'
	if kp.Proc.P_stat == sZomb {
		state = 'Z'
	}
	tv := kp.Proc.P_starttime
	return uint64(tv.Sec)*1e6 + uint64(tv.Usec), state, nil
}

// pidExists checks existence with signal 0, which delivers nothing (EPERM
// means it exists but belongs to someone else).
func pidExists(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

var bootIDOnce = sync.OnceValue(func() string {
	s, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
})

// bootID identifies the current boot, so a lock from before a reboot is
// known stale even if its pid and start time happen to match again.
func bootID() string { return bootIDOnce() }
