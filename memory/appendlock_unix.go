//go:build unix && !aix

package memory

import "golang.org/x/sys/unix"

// lockAppend waits for the exclusive flock(2) that every AppendFile of
// the file takes, in any ralph process, for as long as its append may
// still be cut off (AppendFile): so no other of ralph's appends lands
// between a failed write and the cut that takes it back. It returns the
// release, or nil where the file system has no flock, where AppendFile
// still cuts only a file that ends with its own bytes.
func lockAppend(fd uintptr) func() {
	for {
		switch err := unix.Flock(int(fd), unix.LOCK_EX); err {
		case nil:
			return func() { _ = unix.Flock(int(fd), unix.LOCK_UN) }
		case unix.EINTR:
			continue
		default:
			return nil
		}
	}
}
