//go:build !windows

package mcpserve

import "syscall"

// detached starts a process in a session of its own, away from the
// server's terminal and process group.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
