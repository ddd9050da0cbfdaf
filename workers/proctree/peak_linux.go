package proctree

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"
)

// FollowPeakRSS follows the peak resident memory of the running process
// pid, in bytes, by the high-water mark of its own memory (VmHWM in
// /proc/<pid>/status), read every 2 ms until stop is called; stop
// returns the highest seen. It is the reading for a child of a large
// process: the rusage wait4 returns (MaxRSS) counts, for a program the Go
// runtime started with vfork, the memory of the process that started it
// (Linux keeps the larger of the old and new address spaces' marks at
// exec), so every ralph a test started looked as big as the test binary.
// A peak reached in the last 2 ms before the process ends may be missed.
func FollowPeakRSS(pid int) (stop func() int64) {
	var mu sync.Mutex
	var peak int64
	done := make(chan struct{})
	finished := make(chan struct{})
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	read := func() {
		if n := vmHWM(path); n > 0 {
			mu.Lock()
			peak = max(peak, n)
			mu.Unlock()
		}
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// vmHWM is the VmHWM line of a /proc/<pid>/status file, in bytes; 0 when
// it cannot be read (the process is gone, or a zombie).
func vmHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("\nVmHWM:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}
