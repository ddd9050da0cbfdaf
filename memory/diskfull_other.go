//go:build !linux && !darwin && !freebsd && !windows

package memory

import (
	"errors"
	"syscall"
)

// DiskSpace is not known on this platform.
func DiskSpace(dir string) (free, size int64, err error) {
	return 0, 0, errors.New("free space is not known on this platform")
}

func isFullErrno(err error) bool { return errors.Is(err, syscall.ENOSPC) }

func mountOf(string) (string, string) { return "", "" }

func isQuotaErrno(error) bool { return false }

func isIOErrno(err error) bool { return errors.Is(err, syscall.EIO) }
