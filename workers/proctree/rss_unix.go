//go:build unix

package proctree

import (
	"os"
	"runtime"
	"syscall"
)

// MaxRSS is a finished child's peak resident memory in bytes (0 where
// the platform does not say), as wait4 reports it. On Linux that is at
// least the peak of the process that started the child (see
// FollowPeakRSS), so it reads true only for a small starter such as
// cmd/benchpeers; a test binary follows its children with FollowPeakRSS.
func MaxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	// Linux and the BSDs count ru_maxrss in kilobytes, macOS in bytes.
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss << 10
}
