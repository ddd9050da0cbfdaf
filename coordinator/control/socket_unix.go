//go:build unix

package control

import (
	"errors"
	"os"
	"syscall"
)

// ownerOnly makes the socket file its owner's only. On Linux the file
// already has the mode from before bind (beforeBind); the chmod costs
// nothing there and is the whole guard elsewhere.
func ownerOnly(path string) error { return os.Chmod(path, 0o600) }

// isRefused reports a socket nobody listens on any more.
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
