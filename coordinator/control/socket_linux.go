//go:build linux

package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSocketPath is the longest path a unix socket address holds: sun_path
// is 108 bytes on Linux, with room for the terminating NUL.
const maxSocketPath = 107

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

// listen binds the socket at path for its owner only. The mode is set on
// the socket before bind, so the file appears with it (the kernel takes
// the new inode's mode from the socket's), and no other user can connect
// in the moment between bind and a chmod; checkPeer checks each peer as well.
func listen(path string) (*net.UnixListener, error) {
	addr, done, err := address(path)
	if err != nil {
		return nil, err
	}
	defer done()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var ferr error
		if err := c.Control(func(fd uintptr) { ferr = unix.Fchmod(int(fd), 0o600) }); err != nil {
			return err
		}
		return ferr
	}}
	l, err := lc.Listen(context.Background(), "unix", addr)
	if err != nil {
		return nil, err
	}
	ul := l.(*net.UnixListener)
	// The address may be a /proc/self/fd path that means nothing once
	// done closes the descriptor: the server removes the socket itself.
	ul.SetUnlinkOnClose(false)
	return ul, nil
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// ownSocket reports whether the file at path belongs to this process's
// user.
func ownSocket(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && int(st.Uid) == os.Getuid()
}
