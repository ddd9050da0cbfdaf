//go:build aix || (!unix && !windows)

package memory

import "errors"

// errNoFlock makes AcquireLock use its O_EXCL fallback where the system
// has no flock(2) and no byte-range lock that ralph uses.
var errNoFlock = errors.New("flock is not used on this platform")

func tryFlock(fd uintptr, exclusive bool) error { return errNoFlock }

func unflock(fd uintptr) {}
