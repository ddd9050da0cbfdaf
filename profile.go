//go:build ralphprofile

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// profiled writes a CPU profile to $RALPH_CPUPROFILE when set: a tool for
// ralph's developers to see where its own time goes, in a build made
// with -tags ralphprofile (make profile) only (see noprofile.go).
func profiled(fn func() int) int {
	path := os.Getenv("RALPH_CPUPROFILE")
	if path == "" {
		return fn()
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ralph: cannot write the CPU profile:", err)
		return fn()
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "ralph: cannot start the CPU profile:", err)
		return fn()
	}
	defer pprof.StopCPUProfile()
	return fn()
}
