//go:build linux || darwin || freebsd

package memory

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// DiskSpace reports the bytes free to this user and the size of the file
// system that holds dir.
func DiskSpace(dir string) (free, size int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), int64(st.Blocks) * int64(st.Bsize), nil
}

func isFullErrno(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func isQuotaErrno(err error) bool { return errors.Is(err, syscall.EDQUOT) }

func isIOErrno(err error) bool { return errors.Is(err, syscall.EIO) }
