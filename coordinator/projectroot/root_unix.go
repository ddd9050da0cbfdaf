//go:build unix

package projectroot

import (
	"io/fs"
	"os"
	"syscall"
)

// ownerOf is the uid that owns the file fi describes, -1 when unknown.
func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// shared reports whether every user may write into the directory fi
// describes: world-writable, or sticky (as /tmp is), which only makes
// sense on a directory all may write.
func shared(fi os.FileInfo) bool {
	return sticky(fi) || fi.Mode().Perm()&0o002 != 0
}

// sticky reports whether fi describes a sticky directory: one made for
// every user to keep their own files in, as /tmp, /var/tmp and /dev/shm.
func sticky(fi os.FileInfo) bool {
	return fi.Mode()&fs.ModeSticky != 0
}

// tempDirs are the usual temporary directories, whatever $TMPDIR says.
func tempDirs() []string { return []string{"/tmp", "/var/tmp", "/dev/shm"} }
