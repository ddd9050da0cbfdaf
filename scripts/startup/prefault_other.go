//go:build !linux

package startup

// prefault maps nothing: MADV_POPULATE_READ and /proc/self/maps are
// Linux's.
func prefault() {}
