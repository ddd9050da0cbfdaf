package memory

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// Windows locks byte ranges, and a locked range cannot be read through
// another handle, so the lock is taken on one byte far past the end of the
// file: the holder's information stays readable by `ralph status`. Like
// flock, such a lock belongs to the open handle and goes with it, also
// when its process dies.
const lockOffsetHigh = 1 << 30 // the byte at offset 2^62

// tryFlock takes a non-blocking lock (exclusive or shared) on the file
// handle fd. It returns errWouldBlock if another handle holds a
// conflicting lock.
func tryFlock(fd uintptr, exclusive bool) error {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := lockOverlapped()
	err := windows.LockFileEx(windows.Handle(fd), flags, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errWouldBlock
	}
	return err
}

func unflock(fd uintptr) {
	ol := lockOverlapped()
	_ = windows.UnlockFileEx(windows.Handle(fd), 0, 1, 0, &ol)
}

func lockOverlapped() windows.Overlapped {
	return windows.Overlapped{OffsetHigh: lockOffsetHigh}
}

// stillActive is the exit code GetExitCodeProcess reports for a process
// that is still running (STILL_ACTIVE).
const stillActive = 259

// procStat reads a process's creation time (100 ns units since 1601) and
// state: 'Z' once it has exited, though a handle still keeps it known.
func procStat(pid int) (start uint64, state byte, err error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return 0, 0, fmt.Errorf("process %d: %w", pid, os.ErrNotExist)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, 0, fmt.Errorf("process %d: %w", pid, err)
	}
	state = 'R'
	var code uint32
	if windows.GetExitCodeProcess(h, &code) == nil && code != stillActive {
		state = 'Z'
	}
	return uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime), state, nil
}

// pidExists is the fallback when procStat cannot ask: a process that
// exists but may not be opened (another user's) counts as existing.
func pidExists(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	windows.CloseHandle(h)
	return true
}

// bootID is empty: a creation time is a moment in time, not a count since
// boot, so a pid reused after a reboot already has another one.
func bootID() string { return "" }
