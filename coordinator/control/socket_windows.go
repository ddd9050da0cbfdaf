package control

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/windows"
)

// The control socket is an AF_UNIX socket on Windows too (Windows 10 and
// later have them, and Go's net package speaks them). Who may connect is
// decided by the socket file's access list, as the mode decides on Unix.

// maxSocketPath is the longest path a unix socket address holds: sun_path
// is 108 bytes on Windows too, with room for the terminating NUL.
const maxSocketPath = 107

// shortPath has no /proc/self/fd to go through: a project too deep for a
// socket address has no control socket here.
func shortPath(path string) (string, func(), error) {
	return "", nil, fmt.Errorf("the control socket's path %s is longer than a socket address holds", path)
}

// listen binds the socket at path and gives its file an access list that
// lets only this user (and SYSTEM) connect. The file appears with the
// list it inherits from .ralph; the owner-only one follows at once.
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
	if err := ownerOnly(path); err != nil {
		ul.Close()
		return nil, fmt.Errorf("make %s its owner's only: %w", path, err)
	}
	return ul, nil
}

// ownerOnly replaces path's access list with one that grants this
// process's user, and SYSTEM, everything and nobody else anything.
func ownerOnly(path string) error {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;" + user.User.Sid.String() + ")(A;;GA;;;SY)")
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
}

// checkPeer has nothing more to ask: the access list keeps other users
// out, and the model's commands, which run unsandboxed on Windows (only
// with danger-full-access), could act as the person anyway.
func checkPeer(net.Conn) string { return "" }

// isRefused reports a socket nobody listens on any more.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, windows.WSAECONNREFUSED)
}

// checkServer cannot ask the kernel here; the socket's directory is its
// owner's only.
func checkServer(net.Conn) string { return "" }

// ownSocket cannot tell a file's owner cheaply here; a refused connect is
// taken for another user's socket.
func ownSocket(string) bool { return false }
