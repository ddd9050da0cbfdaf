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

// fileID is a file's device and inode, which stay with it under another
// name.
func fileID(fi fs.FileInfo) [2]uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	}
	return [2]uint64{}
}
