//go:build !linux

package proctree

// Memory is zeros where the platform has no /proc to read it from; a
// benchmark's table then shows none.
func Memory(pid int) (rss, peak int64) { return 0, 0 }

// Private is zero where the platform has no /proc to read it from.
func Private(pid int) int64 { return 0 }
