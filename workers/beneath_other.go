//go:build unix && !linux

package workers

import (
	"os"
	"sync/atomic"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// forceNoOpenat2 exists for the tests shared with Linux; without openat2
// the fallback is the only path.
var forceNoOpenat2 atomic.Bool

// oPath is never used without openat2.
const oPath = 0

// hasOpenat2 is false: only Linux has openat2, so elsewhere the file tools
// check paths in user space before opening them (see beneath.go).
func hasOpenat2() bool { return false }

func openat2Beneath(dirfd int, rel string, flags int) (int, error) {
	panic("openat2Beneath without openat2")
}

// fdPath cannot ask the kernel without /proc; callers resolve the path
// they opened instead.
func fdPath(fd int) (string, bool) { return "", false }

// newAnonymous makes a temporary file, in the person's temporary
// directory, and removes its name at once.
func newAnonymous(name string) (*os.File, error) {
	f, err := os.CreateTemp("", "ralph-masked-*")
	if err != nil {
		return nil, err
	}
	rootfs.Person().Remove(f.Name())
	return f, nil
}
