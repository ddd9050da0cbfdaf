//go:build !linux

package e2e

import "time"

// sampleCPU reads no CPU where there is no /proc: the benchmarks report
// no CPU figures there.
func sampleCPU(int, time.Duration) (stop func() []cpuSample) {
	return func() []cpuSample { return nil }
}
