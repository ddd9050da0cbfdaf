package e2e

import "os"

// maxRSS is 0 on Windows, whose process usage carries no peak resident
// memory; the end-to-end tests do not run there (proc_windows_test.go).
func maxRSS(*os.ProcessState) int64 { return 0 }
