package control

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerOf asks the kernel who is at the other end of c: macOS names the
// peer's user only (LOCAL_PEERCRED).
func peerOf(c net.Conn) (peer, error) {
	var cred *unix.Xucred
	err := onSocket(c, func(fd int) (err error) {
		cred, err = unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		return err
	})
	if err != nil {
		return peer{}, err
	}
	return peer{uid: int(cred.Uid)}, nil
}

// confinedPeer asks nothing more: whether the peer is one of ralph's own
// commands is not known here (Linux reads it from /proc); the Seatbelt
// profile keeps sandboxed commands away from .ralph's sockets instead.
func confinedPeer(peer) string { return "" }

// confinedServer asks nothing more: macOS names a server's user only.
func confinedServer(peer) string { return "" }
