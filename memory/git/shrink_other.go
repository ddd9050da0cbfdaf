//go:build unix && !linux

package git

// shrinkInPlace cuts a file short only on Linux, whose write lease tells
// that no other process has the file open or mapped (see
// shrink_linux.go); elsewhere every file goes the usual way.
func shrinkInPlace(dirfd int, name, mode string, data []byte) (bool, error) {
	return false, nil
}
