//go:build linux && !amd64

package proctree

// vforkSyscall: this architecture's vfork is clone with CLONE_VFORK.
const vforkSyscall = -1
