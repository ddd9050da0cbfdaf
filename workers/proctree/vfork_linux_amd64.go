package proctree

import "golang.org/x/sys/unix"

// vforkSyscall is vfork's number where the architecture has one.
const vforkSyscall = unix.SYS_VFORK
