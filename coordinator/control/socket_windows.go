package control

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// The control socket is an AF_UNIX socket on Windows too (Windows 10 and
// later have them, and Go's net package speaks them). Who may connect is
// decided by the socket file's access list, as the mode decides on Unix
// (ownerOnly here); what the platforms share is in socket.go and
// socket_other.go.

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

// isRefused reports a socket nobody listens on any more.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, windows.WSAECONNREFUSED)
}

// ownSocket cannot tell a file's owner cheaply here; a refused connect is
// taken for another user's socket.
func ownSocket(string) bool { return false }
