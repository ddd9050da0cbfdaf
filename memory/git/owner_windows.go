package git

import (
	"os"
	"strings"

	"golang.org/x/sys/windows"
)

// sameDevice reports whether two paths lie on one volume, which is where
// git for Windows stops its discovery (GIT_DISCOVERY_ACROSS_FILESYSTEM).
// The file information Go gives has no device number there, so the
// volume's mount point is asked for by path.
func sameDevice(pa string, _ os.FileInfo, pb string, _ os.FileInfo) bool {
	va, ok1 := volumeOf(pa)
	vb, ok2 := volumeOf(pb)
	return ok1 && ok2 && strings.EqualFold(va, vb)
}

// volumeOf returns the mount point of the volume path lies on.
func volumeOf(path string) (string, bool) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return "", false
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	if err := windows.GetVolumePathName(p, &buf[0], uint32(len(buf))); err != nil {
		return "", false
	}
	return windows.UTF16ToString(buf), true
}

// ownedByMe reports whether path's owner is the user this process runs
// as, as git's safe.directory check asks.
func ownedByMe(path string) bool {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return false
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return false
	}
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return false
	}
	return windows.EqualSid(owner, user.User.Sid)
}

// fileID is a file's identity; unknown here, so a record of a repository
// holds by its path alone.
func fileID(os.FileInfo) string { return "" }
