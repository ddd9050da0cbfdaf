package text

import "fmt"

// Size is a byte count as people read it: "512 bytes", "4.0 KB", "3.2 MB",
// "1.5 GB" (powers of 1024, as df -h counts).
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return Counted(int(n), "byte", "bytes")
}
