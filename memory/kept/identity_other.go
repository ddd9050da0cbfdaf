//go:build !linux

package kept

import "os"

// openPath cannot ask the kernel without /proc: the caller resolves the
// name the file was opened by.
func openPath(*os.File) (string, bool) { return "", false }
