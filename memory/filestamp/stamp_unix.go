//go:build unix

package filestamp

import (
	"io/fs"
	"syscall"
)

// Change is a file's change time (ctime) in nanoseconds: it moves
// whenever the file is written, or a directory's entry is added, removed
// or renamed, and no command can set it back.
func Change(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return ctimeNanos(st)
	}
	return fi.ModTime().UnixNano()
}

// ID is a file's device and inode, which stay with it under another
// name.
func ID(fi fs.FileInfo) [2]uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	}
	return [2]uint64{}
}
