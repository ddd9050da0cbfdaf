//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's times: USER_HZ, 100 on
// every Linux ralph runs on.
const clockTick = 10 * time.Millisecond

// sampleCPU reads pid's CPU (its own and its reaped children's, as
// /proc/<pid>/stat counts them) every interval until stop, which returns
// the samples. A git process's CPU is counted once ralph has reaped it,
// a pack's beside the tasks at its end.
func sampleCPU(pid int, every time.Duration) (stop func() []cpuSample) {
	var (
		mu      sync.Mutex
		samples []cpuSample
	)
	done := make(chan struct{})
	ended := make(chan struct{})
	path := fmt.Sprintf("/proc/%d/stat", pid)
	go func() {
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if cpu, ok := procCPU(path); ok {
				mu.Lock()
				samples = append(samples, cpuSample{time.Now(), cpu})
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() []cpuSample {
		close(done)
		<-ended
		mu.Lock()
		defer mu.Unlock()
		return samples
	}
}

// procCPU is utime+stime+cutime+cstime of a /proc/<pid>/stat.
func procCPU(path string) (time.Duration, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	// The fields after the command's name, which may hold spaces, in
	// parentheses: state is the third field of the line, utime the 14th.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 15 {
		return 0, false
	}
	var ticks int64
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, true
}
