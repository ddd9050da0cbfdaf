package workers

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// pPID is idtype_t P_PID for waitid(2); package syscall does not export it.
const pPID = 1

// waitExitedNoReap blocks until the process pid has exited but leaves it a
// zombie (WNOWAIT). While the zombie exists its pid, and so the process group
// id, cannot be reused, which makes killing the group afterwards safe.
func waitExitedNoReap(pid int) error {
	var info [128]byte // siginfo_t; its content is not needed
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}

// waitGroupGone waits, for at most timeout, until no member of the process
// group pgid is alive, repeating SIGKILL meanwhile. SIGKILL is delivered
// asynchronously, so without this a killed process could still be running
// for a moment after the call returns. Zombies count as gone: they run no
// code, and reaping orphans is their new parent's (init's) job, which some
// container inits do only every few seconds.
func waitGroupGone(pgid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) || !groupHasLiveMember(pgid) {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(time.Millisecond)
	}
}

// groupHasLiveMember scans /proc for a process in group pgid that is not a
// zombie. If /proc cannot be read it reports false: the group was already
// sent SIGKILL and there is nothing more to wait on.
func groupHasLiveMember(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // the process is gone already
		}
		state, group, ok := parseStat(data)
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseStat extracts the state and process group from /proc/PID/stat:
// "pid (comm) state ppid pgrp ...". comm may contain spaces and parentheses,
// so fields are counted from the last ')'.
func parseStat(data []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}

// procAttr puts the command in its own process group, and asks the kernel
// to kill its shell if ralph itself dies without cleaning up (SIGKILL), so a
// killed ralph does not leave a command running behind it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// ProcessAlive reports whether pid is running, a zombie counting as gone:
// for tests, here and in packages built on these process groups, that
// check nothing outlived what was stopped.
func ProcessAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	state, _, ok := parseStat(data)
	return ok && state != 'Z' && state != 'X'
}
