package control

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// checkPeer says why the process at the other end of c may not steer this
// ralph, or "" when it may. macOS names the peer's user (LOCAL_PEERCRED);
// another user is refused, root too, and a peer that cannot be asked is
// refused: the check fails closed. Whether the peer is one of ralph's own
// commands is not known here (Linux reads it from /proc); the Seatbelt
// profile keeps sandboxed commands away from .ralph's sockets instead.
func checkPeer(c net.Conn) string {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return refusedText
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return refusedText
	}
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil || cerr != nil {
		return refusedText
	}
	if int(cred.Uid) != os.Getuid() {
		return refusedText
	}
	return ""
}

// checkServer says why the process listening at the other end of c is
// not a ralph of this user's, or "" when it may be: macOS names its user
// only, so another user's is refused.
func checkServer(c net.Conn) string {
	if checkPeer(c) != "" {
		return "it runs as another user"
	}
	return ""
}
