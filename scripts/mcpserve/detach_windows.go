package mcpserve

import "syscall"

// detached starts a process in a process group of its own, so that the
// client's Ctrl-C does not reach it.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
