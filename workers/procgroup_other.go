//go:build unix && !linux

package workers

import (
	"errors"
	"syscall"
	"time"
)

// waitExitedNoReap is only implemented on Linux; elsewhere the caller falls
// back to reaping the leader before killing its group.
func waitExitedNoReap(pid int) error { return errors.ErrUnsupported }

// waitGroupGone waits, for at most timeout, until the process group pgid no
// longer exists, repeating SIGKILL meanwhile. Without /proc, zombies awaiting
// their parent count as present, so this may wait until timeout.
func waitGroupGone(pgid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) && time.Now().Before(deadline) {
		syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(time.Millisecond)
	}
}

// procAttr puts the command in its own process group.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// reapGroup has nothing to reap where ralph is no subreaper.
func reapGroup(pgid int) {}
