//go:build !unix

package sandbox

import "io/fs"

// changeStamp is the modification time where there is no ctime to read.
func changeStamp(fi fs.FileInfo) int64 { return fi.ModTime().UnixNano() }

// fileID is unknown here: a file is known by its name only.
func fileID(fs.FileInfo) [2]uint64 { return [2]uint64{} }
