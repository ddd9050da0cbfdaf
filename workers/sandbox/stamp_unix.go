//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// changeStamp is a directory's change time (ctime) in nanoseconds: it
// moves whenever an entry is added, removed or renamed, and, unlike the
// modification time, no command can set it back.
func changeStamp(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return ctimeNanos(st)
	}
	return fi.ModTime().UnixNano()
}
