package workers

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// oPath opens a file only to look at it, with no read or write access and
// without the side effects opening a device can have.
const oPath = unix.O_PATH

// forceNoOpenat2 makes the file tools take the fallback path, for tests of
// the behaviour on kernels without openat2.
var forceNoOpenat2 atomic.Bool

// openat2Works probes once whether the kernel (and any seccomp filter in
// front of it) lets this process call openat2: Linux before 5.6 answers
// ENOSYS, and older container runtimes answer EPERM for calls they do not
// know.
var openat2Works = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM)
	}
	unix.Close(fd)
	return true
})

func hasOpenat2() bool { return !forceNoOpenat2.Load() && openat2Works() }

// openat2Beneath opens rel relative to dirfd with the kernel refusing any
// step out of dirfd: "..", absolute paths and symlinks that leave it fail
// with EXDEV, and /proc's magic links are not followed at all.
func openat2Beneath(dirfd int, rel string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	for attempt := 0; ; attempt++ {
		fd, err := unix.Openat2(dirfd, rel, &how)
		// EAGAIN: a rename elsewhere raced with the lookup and the kernel
		// could not vouch for its result; a fresh lookup can.
		if errors.Is(err, unix.EAGAIN) && attempt < 16 {
			continue
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}

// fdPath asks the kernel where an open directory is now.
func fdPath(fd int) (string, bool) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	if err != nil || n == 0 || n == len(buf) {
		return "", false
	}
	p := string(buf[:n])
	if !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return "", false // anonymous files, removed directories
	}
	return p, true
}

// newAnonymous makes a file no path names, in memory.
func newAnonymous(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate("ralph-masked", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}
