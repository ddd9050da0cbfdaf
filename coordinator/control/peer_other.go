//go:build !linux && !darwin && !windows

package control

import "net"

// checkPeer cannot ask the kernel here; the socket's mode keeps other
// users out.
func checkPeer(net.Conn) string { return "" }

// checkServer cannot ask the kernel here; the socket's directory is its
// owner's only.
func checkServer(net.Conn) string { return "" }
