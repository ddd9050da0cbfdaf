//go:build !unix

package git

import (
	"io/fs"
	"os"
)

// readDirTyped lists the directory f with each entry's type; see the
// Unix file for why it is not simply ReadDir there.
func readDirTyped(f *os.File) ([]fs.DirEntry, error) { return f.ReadDir(-1) }
