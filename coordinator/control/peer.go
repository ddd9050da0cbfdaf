//go:build linux || darwin

package control

import (
	"errors"
	"net"
	"os"
)

// peer is who the kernel says is at the other end of a control
// connection: its user, and its pid where the kernel names it (Linux;
// 0 on macOS).
type peer struct{ uid, pid int }

// errNotUnix is a connection that is no unix socket, whose peer the
// kernel cannot name.
var errNotUnix = errors.New("not a unix socket")

// onSocket runs f on c's descriptor.
func onSocket(c net.Conn, f func(fd int) error) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errNotUnix
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := raw.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// checkPeer says why the process at the other end of c may not steer this
// ralph, or "" when it may: another user is refused, root too, and a peer
// that cannot be asked is refused, so the check fails closed. What more
// a platform knows of the peer (Linux: whether this ralph started it,
// see confinedPeer) is asked after.
func checkPeer(c net.Conn) string {
	p, err := peerOf(c)
	if err != nil || p.uid != os.Getuid() {
		return refusedText
	}
	return confinedPeer(p)
}

// checkServer says why the process listening at the other end of c (a
// client's connection) is not a ralph of this user's, or "" when it may
// be: it runs as this user, and, where the platform can tell, it is not
// confined where this client is not (confinedServer). A server that
// cannot be looked at is refused.
func checkServer(c net.Conn) string {
	p, err := peerOf(c)
	switch {
	case err != nil:
		return "it cannot be asked who it is"
	case p.uid != os.Getuid():
		return "it runs as another user"
	}
	return confinedServer(p)
}
