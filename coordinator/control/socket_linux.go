//go:build linux

package control

import (
	"fmt"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// shortPath reaches a socket whose path is too long for sun_path through
// /proc/self/fd: the directory is opened (O_PATH, which needs no read
// permission) and the socket named inside the descriptor's magic link,
// which the kernel resolves like the directory itself. No chdir, which
// would move every goroutine of the process.
func shortPath(path string) (string, func(), error) {
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("open %s: %w", filepath.Dir(path), err)
	}
	addr := fmt.Sprintf("/proc/self/fd/%d/%s", fd, filepath.Base(path))
	if len(addr) > maxSocketPath {
		unix.Close(fd)
		return "", nil, fmt.Errorf("the control socket's name %q is too long", filepath.Base(path))
	}
	return addr, func() { unix.Close(fd) }, nil
}

// beforeBind sets the socket's mode before it is bound, so the file
// appears with it: the kernel takes the new inode's mode from the
// socket's.
func beforeBind(_, _ string, c syscall.RawConn) error {
	var ferr error
	if err := c.Control(func(fd uintptr) { ferr = unix.Fchmod(int(fd), 0o600) }); err != nil {
		return err
	}
	return ferr
}
