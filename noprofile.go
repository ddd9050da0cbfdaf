//go:build !ralphprofile

package main

import (
	"fmt"
	"os"
)

// profiled runs fn. The CPU profile (profile.go) is left out of the
// build people run: runtime/pprof in the binary keeps the runtime's
// memory profiling on, which records a stack for an allocation in every
// 512 KB from the first package's init on, and brings compress/gzip and
// text/tabwriter's initialisation with it; without it, `ralph --version`
// made 5% fewer page faults and took 0.955 of the time (100 pairs each
// way, idle). A developer builds with -tags ralphprofile (make profile).
func profiled(fn func() int) int {
	if os.Getenv("RALPH_CPUPROFILE") != "" {
		fmt.Fprintln(os.Stderr, "ralph: RALPH_CPUPROFILE is ignored: this build has no CPU profile; build one with `make profile` (go build -tags ralphprofile)")
	}
	return fn()
}
