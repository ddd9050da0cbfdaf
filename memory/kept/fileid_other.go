//go:build !unix

package kept

import "io/fs"

// idOf cannot tell a file's identity here: the door judges by path.
func idOf(fs.FileInfo) (fileID, bool) { return fileID{}, false }
