//go:build unix

package proctree

import (
	"os"
	"runtime"
	"syscall"
)

// MaxRSS is a finished child's peak resident memory in bytes (0 where
// the platform does not say): the benchmarks' one reading of it, for
// `make bench` and the end-to-end benchmarks alike.
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
