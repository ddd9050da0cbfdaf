//go:build !linux

package sandbox

import "os"

// listDir calls fn with each entry of dir that rescan looks at: the
// directories (isDir) and any entry named .git.
func listDir(dir string, fn func(name string, isDir bool)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == ".git" {
			fn(e.Name(), e.IsDir())
		}
	}
	return nil
}

// dirLinks is how many directories dir holds, where the file system's
// link count says: here it is not trusted, and rescan lists.
func dirLinks(string, os.FileInfo) (int, bool) { return 0, false }
