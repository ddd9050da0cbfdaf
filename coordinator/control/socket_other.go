//go:build !linux

package control

import (
	"fmt"
	"syscall"
)

// shortPath has no /proc/self/fd to go through: a project too deep for a
// socket address has no control socket here.
func shortPath(path string) (string, func(), error) {
	return "", nil, fmt.Errorf("the control socket's path %s is longer than a socket address holds", path)
}

// beforeBind is nothing here: a socket's mode cannot be set before bind,
// so ownerOnly follows the bind at once.
var beforeBind func(network, address string, c syscall.RawConn) error
