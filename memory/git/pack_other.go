//go:build !unix

package git

import (
	"os/exec"
	"time"
)

// inOwnGroup leaves the command as it is: a stop kills it (see the unix
// version for why a group matters there).
func inOwnGroup(*exec.Cmd, func()) {}

// awaitGroup has nothing to wait for: the repack had no group of its own.
func awaitGroup(int, time.Duration) {}
