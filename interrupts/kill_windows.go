package interrupts

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// Kill ends the process pid. Windows cannot deliver SIGTERM or SIGINT to
// a process that shares no console with the caller, so every signal but
// 0 terminates it at once; 0 only checks that it exists.
func Kill(pid int, sig syscall.Signal) error {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		if err == windows.ERROR_INVALID_PARAMETER {
			return syscall.ESRCH // no such process
		}
		return err
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err == nil && code != stillActive {
		return syscall.ESRCH // exited, not yet forgotten
	}
	if sig == 0 {
		return nil
	}
	return windows.TerminateProcess(h, 128+uint32(sig))
}

// raise ends this process with the exit code of a process ended by sig
// (130 for Ctrl-C, 143 for SIGTERM), as ralph's exit codes promise:
// Windows has no way to end oneself by a signal.
func raise(sig syscall.Signal) { os.Exit(128 + int(sig)) }

// stillActive is the exit code GetExitCodeProcess reports for a process
// that is still running (STILL_ACTIVE).
const stillActive = 259
