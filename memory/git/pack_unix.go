//go:build unix

package git

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// inOwnGroup puts a repack in a process group of its own, and has its
// stop reach the whole group with SIGTERM: repack runs pack-objects,
// which a kill of repack alone would leave working on, and git answers
// SIGTERM by removing its temporary files, where SIGKILL would leave
// them. A group of its own also keeps the terminal's ^C off it: ralph
// decides when it stops.
// before runs first, when the group is about to be stopped.
func inOwnGroup(cmd *exec.Cmd, before func()) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		before()
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

// awaitGroup waits up to limit for every process of the group pgid to
// end, and kills what is left of it then. The group's id stays taken
// while any process is in it, so the signals reach no one else's.
func awaitGroup(pgid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
