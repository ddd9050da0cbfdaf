package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The helper's part in keeping named Unix sockets outside the project out
// of reach. With Landlock ABI 9 the kernel refuses them itself: the
// helper grants "resolve unix" only on the project and the sockets the
// person listed. Before ABI 9 the helper installs connectFilter, hands
// its listener to ralph, and performs the Unix-socket connects ralph has
// judged (see connectSupervisor for why the helper, not ralph).

// unixSpec is what the helper needs to know about Unix sockets. It
// travels in the helper's argument beside the spec, under "unix", so the
// spec itself (and the key that tells helpers apart) stays as it is.
type unixSpec struct {
	Root    string   `json:"root"`
	Sockets []string `json:"sockets,omitempty"`
	// NoFilter leaves the seccomp supervisor out; tests set it to measure
	// what the supervisor costs.
	NoFilter bool `json:"no_filter,omitempty"`
	// HiddenPaths are the well-known secret files and directories commands
	// may not read (see hidden.go).
	HiddenPaths []string `json:"hidden_paths,omitempty"`

	// network and landlocked are the spec's own, read from the same
	// argument: the socket filter depends on them.
	network, landlocked bool
}

// helperUnix is the helper process's unixSpec, set once by HelperMain
// before it confines itself. A variable rather than a parameter keeps the
// confinement's functions as they were.
var helperUnix unixSpec

// parseUnixSpec takes the "unix" part of the helper's argument; a missing
// one is the zero spec.
func parseUnixSpec(arg string) unixSpec {
	var w struct {
		Unix       unixSpec `json:"unix"`
		Network    bool     `json:"network"`
		Landlocked bool     `json:"landlocked"`
	}
	_ = json.Unmarshal([]byte(arg), &w) // the spec itself was parsed, and checked, already
	w.Unix.network, w.Unix.landlocked = w.Network, w.Landlocked
	return w.Unix
}

// noConnectFilter makes helpers started from now on run without the
// seccomp supervisor; only tests set it, to measure its cost.
var noConnectFilter bool

// helperArgument adds the policy's unixSpec to the spec's JSON for the
// helper's command line.
func helperArgument(key string, p *Policy) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(key), &m); err != nil {
		return key
	}
	u, err := json.Marshal(unixSpec{Root: p.Root, Sockets: p.UnixSockets, NoFilter: noConnectFilter, HiddenPaths: p.HiddenPaths})
	if err != nil {
		return key
	}
	m["unix"] = u
	b, err := json.Marshal(m)
	if err != nil {
		return key
	}
	return string(b)
}

// landlockResolveUnix is the first Landlock ABI that governs connects to
// named Unix sockets (LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
const landlockResolveUnix = 9

// resolveUnixRules are the Landlock rules that let commands connect to
// named sockets in the project and to those the person allowed, on a
// kernel whose Landlock governs such connects. Every other named socket is
// refused by Landlock itself, except one whose server runs inside the
// sandbox (Landlock's own rule for the same domain), which keeps a test
// suite's server in $TMPDIR reachable.
func resolveUnixRules(abi int) []landlock.Rule {
	if abi < landlockResolveUnix || helperUnix.Root == "" {
		return nil
	}
	rules := []landlock.Rule{landlock.PathAccess(landlock.AccessFSSet(ll.AccessFSResolveUnix), helperUnix.Root)}
	if len(helperUnix.Sockets) > 0 {
		// A socket the person listed may not exist yet (its server is
		// not running); it is left out rather than fail the sandbox.
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(ll.AccessFSResolveUnix), helperUnix.Sockets...).IgnoreIfMissing())
	}
	return rules
}

// superviseConnects runs in the helper once it is confined. It installs
// the socket filter (connectFilter) on every architecture whose system
// call numbers it knows. Where Landlock cannot refuse named sockets
// (before ABI 9) the filter supervises connects, and superviseConnects
// returns the files ralph's supervisor needs, which go with the ready
// message: the filter's listener, ralph's end of the channel on which
// ralph asks the helper to perform Unix-socket connects, and a sock_diag
// socket of the sandbox's network namespace, where ralph finds out which
// process listens on a socket. It returns none where Landlock does that
// work. The helper closes its copies once sent: a command that got hold
// of the listener could answer its own connects.
func superviseConnects() ([]int, error) {
	if !filterSupported() {
		return nil, nil
	}
	rules := filterRules{noNetwork: helperUnix.landlocked && !helperUnix.network}
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi < landlockResolveUnix && !helperUnix.NoFilter {
		rules.supervise = true
	}
	if !rules.supervise {
		if _, err := installConnectFilter(rules); err != nil {
			return nil, fmt.Errorf("cannot install the socket filter (seccomp): %w", err)
		}
		return nil, nil
	}
	diag, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("cannot open a sock_diag socket: %w", err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		unix.Close(diag)
		return nil, fmt.Errorf("cannot make the connect channel: %w", err)
	}
	f := os.NewFile(uintptr(pair[0]), "connect")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(diag)
		unix.Close(pair[1])
		return nil, fmt.Errorf("connect channel: %w", err)
	}
	conn := c.(*net.UnixConn)
	listener, err := installConnectFilter(rules)
	if err != nil {
		conn.Close()
		unix.Close(diag)
		unix.Close(pair[1])
		return nil, fmt.Errorf("cannot supervise connections to Unix sockets (seccomp user notification): %w", err)
	}
	go serveConnects(conn)
	return []int{listener, pair[1], diag}, nil
}

// serveConnects performs the connects ralph asks for, each on a goroutine
// of its own, since a connect may block (a server's backlog full). The
// helper runs in the commands' Landlock domain, so a connect it makes for
// them is judged as theirs would be: an abstract socket's server must be
// inside the sandbox (Landlock's scope). Its own connect goes through the
// filter too, and ralph lets it continue: nothing of the commands can
// change the helper's memory (shield), so the address it passes is the
// one ralph sent.
func serveConnects(conn *net.UnixConn) {
	var wmu sync.Mutex
	for {
		m, fds, err := receive[connectMsg](conn)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || !isTemporary(err) {
				return
			}
			continue
		}
		go func() {
			defer closeAll(fds)
			errno := unix.EBADF
			switch len(fds) {
			case 1:
				errno = connectRaw(fds[0], m.Addr)
			case 2:
				// The socket file ralph checked, reached through its
				// descriptor: no name is looked up again.
				errno = connectRaw(fds[0], unixAddr("/proc/self/fd/"+strconv.Itoa(fds[1])))
			}
			wmu.Lock()
			defer wmu.Unlock()
			send(conn, connectMsg{ID: m.ID, Errno: int(errno)})
		}()
	}
}

// connectMsg is one message on the connect channel: ralph asks (Addr, or
// none when the socket file's descriptor comes along) and the helper
// answers (Errno, 0 for success).
type connectMsg struct {
	ID    uint64 `json:"id"`
	Addr  []byte `json:"addr,omitempty"`
	Errno int    `json:"errno,omitempty"`
}

// A connect request carries the socket file's descriptor and the
// caller's socket; see connectSupervisor.viaHelper.
func (connectMsg) files() int      { return 2 }
func (connectMsg) channel() string { return "on the connect channel" }

// connectRaw is connect(2) with the address as bytes, exactly as given. A
// connect interrupted by a signal is made again, as the kernel restarts
// it for a program: for a connection that completed meanwhile that says
// EISCONN, which is success here.
func connectRaw(fd int, addr []byte) unix.Errno {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(p), uintptr(len(addr)))
	for e == unix.EINTR {
		_, _, e = unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(p), uintptr(len(addr)))
		if e == unix.EISCONN {
			e = 0
		}
	}
	return e
}

// unixAddr is a struct sockaddr_un for path, as bytes.
func unixAddr(path string) []byte {
	b := make([]byte, 2, 2+len(path)+1)
	binary.NativeEndian.PutUint16(b, unix.AF_UNIX)
	b = append(b, path...)
	return append(b, 0)
}
