//go:build linux

package memory

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// procStat reads a process's start time (field 22, clock ticks since boot)
// and state (field 3) from /proc/<pid>/stat. The command name (field 2) is
// in parentheses and may itself contain spaces and parentheses, so fields
// are counted from the last ')'.
func procStat(pid int) (start uint64, state byte, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, fmt.Errorf("process %d: %w", pid, os.ErrNotExist)
		}
		return 0, 0, fmt.Errorf("process %d: %w", pid, err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("process %d: malformed /proc stat", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, 0, fmt.Errorf("process %d: malformed /proc stat", pid)
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("process %d: malformed start time: %w", pid, err)
	}
	return start, fields[0][0], nil
}

// pidExists is the fallback when /proc cannot be read: signal 0 checks
// existence without delivering anything (EPERM means it exists but
// belongs to someone else).
func pidExists(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

var bootIDOnce = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// bootID identifies the current boot, so a lock from before a reboot is
// known stale even if its pid and start time happen to match again.
func bootID() string { return bootIDOnce() }
