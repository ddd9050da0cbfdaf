// Package control is a running ralph's control socket: another terminal
// of the same user steers it (ralph stop, say, pause, continue, answer)
// and follows its events (ralph watch) through a unix socket under
// .ralph/. The socket is the running ralph's own: a stale one left by a
// ralph that was killed is replaced by the next, which holds the project
// lock and so knows nobody else serves it.
//
// The protocol is one JSON line each way: a Request, then a Reply; a watch
// gets a Hello and then one line per event, as events.jsonl stores them.
package control

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/ralph-dev/ralph/memory"
)

// SocketName is the socket's name inside .ralph/.
const SocketName = "control.sock"

// Errors callers branch on.
var (
	// ErrNotRunning: no ralph serves the project's socket.
	ErrNotRunning = errors.New("no ralph is running in this project")
	// ErrRefused: the socket belongs to another user.
	ErrRefused = errors.New("the ralph running here belongs to another user")
)

// SocketPath is where the control socket of the project at root lives.
func SocketPath(root string) string {
	return filepath.Join(root, memory.StateDir, SocketName)
}

// address is how to reach path in a socket address. A path too long for
// sun_path is reached through a descriptor of its directory
// (/proc/self/fd/N/control.sock, see shortPath); done closes it and must
// be called once the socket is bound or connected.
func address(path string) (addr string, done func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	return shortPath(path)
}

// dial connects to the socket at path.
func dial(path string) (net.Conn, error) {
	addr, done, err := address(path)
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := net.Dial("unix", addr)
	if err != nil {
		return nil, classify(path, err)
	}
	return c, nil
}

// classify turns a failed connect into the sentence a person needs: no
// socket or nobody listening is ErrNotRunning (a socket left by a killed
// ralph refuses connections); a socket they may not open is ErrRefused.
func classify(path string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist), isRefused(err):
		return ErrNotRunning
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w (%s is not yours to open)", ErrRefused, path)
	}
	return fmt.Errorf("cannot reach the ralph running here through %s: %w", path, err)
}
