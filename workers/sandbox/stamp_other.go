//go:build !unix

package sandbox

import "io/fs"

// changeStamp is the modification time where there is no ctime to read.
func changeStamp(fi fs.FileInfo) int64 { return fi.ModTime().UnixNano() }
