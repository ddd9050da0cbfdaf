//go:build !windows

package memory

import "github.com/spf13/afero"

// replace renames from over to, atomically: readers that hold to open
// keep reading the old file.
func replace(fs afero.Fs, from, to string) error { return fs.Rename(from, to) }
