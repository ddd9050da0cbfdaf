package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/ralph/workers/proctree"
)

// The benchmarks and tests read ralph's memory one way: the kernel's
// figures of ralph's own process (proctree.Memory). Its peak over a whole
// run is what ralph itself reads as it ends and writes to the file
// RALPH_MEMSTATS names (main.go): followed from outside, a peak in the
// last moments is missed, and the rusage wait4 returns is not ralph's
// (at least the test binary's, which started it, and as much as the
// largest git ralph waited for).

// ownPeak is the environment entry that has a ralph write its peak
// resident memory as it ends, and read, which returns that figure in
// bytes once the ralph has exited and forgets it, so that the next run
// with the same entry writes its own.
func ownPeak(tb testing.TB) (entry string, read func() int64) {
	entry, both := ownMemory(tb)
	return entry, func() int64 {
		tb.Helper()
		peak, _ := both()
		return peak
	}
}

// ownMemory is ownPeak with the private part of ralph's resident memory
// as it ended beside the peak (its anonymous pages, without its
// binary's: proctree.Private).
func ownMemory(tb testing.TB) (entry string, read func() (peak, private int64)) {
	path := filepath.Join(tb.TempDir(), "memstats.json")
	return "RALPH_MEMSTATS=" + path, func() (int64, int64) {
		tb.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatalf("ralph wrote no memory figures (did it exit normally?): %v", err)
		}
		_ = os.Remove(path)
		var stats struct {
			Peak    int64 `json:"peak_rss_bytes"`
			Private int64 `json:"private_rss_bytes"`
		}
		if err := json.Unmarshal(data, &stats); err != nil || stats.Peak <= 0 {
			tb.Fatalf("ralph's memory figures %q: %v", data, err)
		}
		return stats.Peak, stats.Private
	}
}

// residentKB is the resident memory of the running process pid now, in
// KB. A platform without /proc skips.
func residentKB(tb testing.TB, pid int) int {
	tb.Helper()
	rss, _ := proctree.Memory(pid)
	if rss == 0 {
		if _, err := os.Stat("/proc/self/status"); err != nil {
			tb.Skipf("no /proc here: %v", err)
		}
		tb.Fatalf("process %d has no resident memory to read (it has ended)", pid)
	}
	return int(rss >> 10)
}
