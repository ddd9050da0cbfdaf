package e2e

import (
	"sort"
	"time"
)

// cpuSample is the CPU a process and the children it reaped had used by
// a moment (sampleCPU).
type cpuSample struct {
	at  time.Time
	cpu time.Duration
}

// cpuAt is the CPU the samples say was used by t, interpolated between
// the two samples around it.
func cpuAt(samples []cpuSample, t time.Time) time.Duration {
	i := sort.Search(len(samples), func(i int) bool { return !samples[i].at.Before(t) })
	switch {
	case i == 0:
		return samples[0].cpu
	case i == len(samples):
		return samples[len(samples)-1].cpu
	}
	a, b := samples[i-1], samples[i]
	frac := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
	return a.cpu + time.Duration(frac*float64(b.cpu-a.cpu))
}
