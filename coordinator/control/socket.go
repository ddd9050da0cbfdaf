// Package control is a running ralph's control socket: another terminal
// of the same user steers it (ralph stop, say, pause, continue, answer)
// and follows its events (ralph watch) through a unix socket in a
// directory of the user's own outside the project (SocketDir). Every
// running ralph serves a socket of its own, named by the project and its
// pid; a client lists them (Peers) and reaches the one that works (Find).
// A socket left by a ralph that was killed is removed by the next client
// or server that sees its pid gone.
//
// The protocol is one JSON line each way: a Request, then a Reply; a watch
// gets a Hello and then one line per event, as events.jsonl stores them.
package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// SocketName was the socket's name inside .ralph/. Nothing is served
// there any more: in the Landlock-only sandbox a command may write .ralph/,
// and one replaced the socket with its own listener and received what the
// person said with ralph say. A file of that name is ignored.
const SocketName = "control.sock"

// Errors callers branch on.
var (
	// ErrNotRunning: no ralph serves the project's socket.
	ErrNotRunning = errors.New("no ralph is running in this project")
	// ErrRefused: the socket belongs to another user.
	ErrRefused = errors.New("the ralph running here belongs to another user")
	// ErrImpostor: what listens on the socket is not a ralph of this
	// user's, and is told nothing.
	ErrImpostor = errors.New("what listens on the control socket is not a ralph of yours, so nothing was sent to it")
	// ErrNoPlace: every directory the socket could live in lies inside
	// the project, where a command could replace it.
	ErrNoPlace = errors.New("every directory for the control socket lies inside the project, where a command could replace it")
)

// SocketDir is the directory the control sockets of the project at root
// live in: one of the user's own that no sandboxed command may write
// (socketDirs). A directory inside the project is passed over; when all
// are, it is the last one and Bind refuses it (ErrNoPlace).
func SocketDir(root string) string { return SocketDirIn(root, os.Getenv) }

// SocketDirIn is SocketDir with the environment read through getenv, for
// a ralph whose environment is not this process's (tests).
func SocketDirIn(root string, getenv func(string) string) string {
	root = filepath.Clean(root)
	dirs := socketDirs(getenv)
	for _, d := range dirs {
		if !within(root, d) {
			return d
		}
	}
	return dirs[len(dirs)-1]
}

// SocketPathIn is where the ralph of process pid serves the control
// socket of the project at root: every running ralph has its own (a chat
// waiting at its prompt and a ralph run beside it are both reachable),
// named by a hash of the project's path and the pid, so that a client
// finds every socket of a project by its prefix (Peers) and the name
// stays short enough for a socket address.
func SocketPathIn(root string, pid int, getenv func(string) string) string {
	return filepath.Join(SocketDirIn(root, getenv), socketPrefix(root)+strconv.Itoa(pid)+socketSuffix)
}

// socketPrefix begins the name of every control socket of the project at
// root: a hash of its path and a dash; the pid follows.
func socketPrefix(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(sum[:8]) + "-"
}

const socketSuffix = ".sock"

// socketPID is the pid a socket's name carries after the project's
// prefix; ok is false for a name that is not one of its sockets.
func socketPID(name, prefix string) (pid int, ok bool) {
	rest, found := strings.CutPrefix(name, prefix)
	if !found {
		return 0, false
	}
	digits, found := strings.CutSuffix(rest, socketSuffix)
	if !found {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != digits {
		return 0, false
	}
	return pid, true
}

// socketDirs are the directories the control socket may live in, best
// first: the user's runtime directory ($XDG_RUNTIME_DIR, a tmpfs of the
// user's own that ends with their login), else ralph's state directory
// (memory.RegistryDir: $RALPH_HOME, $XDG_STATE_HOME/ralph or
// ~/.local/state/ralph). Neither is the temporary directory or the
// project, which sandboxed commands may write; ralph's state directory is
// kept from them even when the home lies in the temporary directory.
func socketDirs(getenv func(string) string) []string {
	var dirs []string
	// A runtime directory in the temporary directory (set so on CI, or
	// by hand) is one commands may write: a command could remove the
	// socket and leave the person no way to stop ralph.
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) && !sandbox.WritableByCommands(d) {
		dirs = append(dirs, filepath.Join(d, "ralph"))
	}
	return append(dirs, filepath.Join(memory.RegistryDir(getenv), "run"))
}

// within reports whether path is root or lies under it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, filepath.Clean(path))
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// makeSocketDir makes the socket's directory, its owner's only.
func makeSocketDir(path, root string) error {
	dir := filepath.Dir(path)
	if within(filepath.Clean(root), dir) {
		return ErrNoPlace
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make the control socket's directory: %w", err)
	}
	// MkdirAll leaves an existing directory as it is; this one holds
	// nobody else's files.
	_ = os.Chmod(dir, 0o700)
	return nil
}

// maxSocketPath is the longest path a unix socket address holds: the
// size of sun_path less its terminating NUL, 108 bytes on Linux and
// Windows, 104 on macOS and the BSDs.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// listen binds the socket at path for its owner only. Where the mode can
// be set on the socket before bind (Linux, beforeBind), the file appears
// with it and no other user can connect in the moment before ownerOnly;
// elsewhere ownerOnly (a chmod, or an access list on Windows) follows the
// bind at once, and checkPeer checks each peer as well where the kernel
// names it.
func listen(path string) (*net.UnixListener, error) {
	addr, done, err := address(path)
	if err != nil {
		return nil, err
	}
	defer done()
	lc := net.ListenConfig{Control: beforeBind}
	l, err := lc.Listen(context.Background(), "unix", addr)
	if err != nil {
		return nil, err
	}
	ul := l.(*net.UnixListener)
	// The address may be a /proc/self/fd path that means nothing once
	// done closes the descriptor: the server removes the socket itself.
	ul.SetUnlinkOnClose(false)
	if err := ownerOnly(path); err != nil {
		ul.Close()
		return nil, fmt.Errorf("make %s its owner's only: %w", path, err)
	}
	return ul, nil
}

// address is how to reach path in a socket address. A path too long for
// sun_path is reached through a descriptor of its directory
// (/proc/self/fd/N/<hash>.sock, see shortPath); done closes it and must
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
	// What the person says goes only to a ralph of theirs: a listener a
	// command put in the socket's place gets nothing.
	if why := checkServer(c); why != "" {
		c.Close()
		return nil, fmt.Errorf("%w: %s", ErrImpostor, why)
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
	case errors.Is(err, os.ErrPermission) && ownSocket(path):
		// The socket is this user's, yet the connect was refused: the
		// sandbox of a command ralph runs keeps it from the socket.
		return fmt.Errorf("%s (the sandbox keeps it from %s)", refusedChild, path)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w (%s is not yours to open)", ErrRefused, path)
	}
	return fmt.Errorf("cannot reach the ralph running here through %s: %w", path, err)
}
