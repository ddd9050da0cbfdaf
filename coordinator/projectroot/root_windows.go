package projectroot

import "os"

// ownerOf is -1 on Windows, as os.Geteuid is: a directory's owner is not
// in the file information Go gives there, and the walk's stops and the
// home directory are what keep it in the person's own directories.
func ownerOf(os.FileInfo) int { return -1 }

// shared is false on Windows: Go reports every writable directory as
// mode 0777 there, which says nothing about other users.
func shared(os.FileInfo) bool { return false }

// sticky is false on Windows, which has no sticky directories.
func sticky(os.FileInfo) bool { return false }

// tempDirs are none beyond os.TempDir on Windows.
func tempDirs() []string { return nil }
