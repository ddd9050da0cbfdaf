//go:build windows

package memory

import (
	"errors"

	"golang.org/x/sys/windows"
)

// DiskSpace reports the bytes free to this user and the size of the
// volume that holds dir.
func DiskSpace(dir string) (free, size int64, err error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	var avail, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &totalFree); err != nil {
		return 0, 0, err
	}
	return int64(avail), int64(total), nil
}

func isFullErrno(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL) || isQuotaErrno(err)
}

func mountOf(string) (string, string) { return "", "" }

func isQuotaErrno(err error) bool { return errors.Is(err, windows.ERROR_DISK_QUOTA_EXCEEDED) }

// isIOErrno: Windows reports a failing device as ERROR_IO_DEVICE.
func isIOErrno(err error) bool { return errors.Is(err, windows.ERROR_IO_DEVICE) }
