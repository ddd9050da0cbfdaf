//go:build unix

package git

import (
	"fmt"
	"os"
	"syscall"
)

// sameDevice reports whether the files at two paths, described by a and
// b, lie on one file system.
func sameDevice(_ string, a os.FileInfo, _ string, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}

// ownedByMe reports whether path's owner is the user this process runs
// as, as git's safe.directory check asks.
func ownedByMe(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// fileID is a file's identity on its file system (device and inode), ""
// when unknown.
func fileID(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}
