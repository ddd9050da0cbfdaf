//go:build !linux && !windows

package control

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// maxSocketPath is the longest path a unix socket address holds: sun_path
// is 104 bytes on macOS and the BSDs, with room for the terminating NUL.
const maxSocketPath = 103

// shortPath has no /proc/self/fd to go through: a project too deep for a
// socket address has no control socket here.
func shortPath(path string) (string, func(), error) {
	return "", nil, fmt.Errorf("the control socket's path %s is longer than a socket address holds", path)
}

// listen binds the socket at path and makes it its owner's only. Without
// a way to set the mode before bind, a chmod follows at once; peers are
// not checked further here.
func listen(path string) (*net.UnixListener, error) {
	addr, done, err := address(path)
	if err != nil {
		return nil, err
	}
	defer done()
	l, err := net.Listen("unix", addr)
	if err != nil {
		return nil, err
	}
	ul := l.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ul.Close()
		return nil, err
	}
	return ul, nil
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// ownSocket reports whether the file at path belongs to this process's
// user.
func ownSocket(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
