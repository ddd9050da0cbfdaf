//go:build !unix

package filestamp

import "io/fs"

// Change is the modification time where there is no ctime to read.
func Change(fi fs.FileInfo) int64 { return fi.ModTime().UnixNano() }

// ID is unknown here: a file is known by its name only.
func ID(fs.FileInfo) [2]uint64 { return [2]uint64{} }
