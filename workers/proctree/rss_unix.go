//go:build unix

package proctree

import (
	"os"
	"runtime"
	"syscall"
)

// MaxRSS is a finished child's peak resident memory in bytes (0 where
// the platform does not say), as wait4 reports it: the largest of the
// child and the descendants it waited for, and on Linux at least the
// peak of the process that started it (see Memory). It reads near true
// only for a small starter such as cmd/benchpeers, which measures
// programs that are not ralph with it; ralph's own figure is Memory's.
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
