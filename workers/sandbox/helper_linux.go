package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/ralph-dev/ralph/memory/text"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// devices are the device files every command may open for writing: shells
// and tools redirect to /dev/null and read random bytes. /dev/tty is left
// out on purpose: writing there would draw on the person's terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// IsHelper reports whether args (os.Args) start the sandbox helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// helperFD is the helper's end of the socket pair to ralph.
const helperFD = 3

// HelperMain is the helper: `ralph __sandbox <spec>`, started by a Runner
// with its socket as descriptor 3. It confines itself once, then starts
// every command ralph asks for: the commands inherit the confinement, so
// each costs one fork and exec, not a new helper. It returns, with the exit
// code to use, when ralph closes the socket or confinement fails.
func HelperMain(args []string) int {
	if len(args) > 2 && args[2] == reapArg {
		return reapMain(args[3:])
	}
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "ralph: the sandbox helper is started by ralph itself, not by hand")
		return 2
	}
	var s spec
	if err := json.Unmarshal([]byte(args[2]), &s); err != nil {
		fmt.Fprintln(os.Stderr, "ralph: bad sandbox policy:", err)
		return 2
	}
	helperUnix = parseUnixSpec(args[2])
	// Nothing but the streams each command is handed passes to it: ralph
	// seals what it inherited, and the helper, which may be started by
	// another program some day, seals again what it holds (the socket
	// to ralph included). The files ralph sends arrive close-on-exec.
	if err := SealInherited(); err != nil {
		fmt.Fprintln(os.Stderr, "ralph:", err)
		return 126
	}
	f := os.NewFile(helperFD, "ralph")
	c, err := net.FileConn(f)
	f.Close()
	conn, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintln(os.Stderr, "ralph: the sandbox helper is started by ralph itself, not by hand")
		return 2
	}
	// The thread that forks every command starts first, and joins a
	// session keyring of its own before the socket filter, which refuses
	// keyctl, is installed.
	h := &helper{conn: conn, leaders: map[uint64]int{}, status: map[uint64]*os.File{}, pidns: true, pinned: make(chan func())}
	go h.pin()
	h.onPinned(func() { err = joinFreshSessionKeyring() })
	if err != nil {
		send(conn, message{Op: opFailed, Err: err.Error()})
		return 126
	}
	if err := confine(s); err != nil {
		send(conn, message{Op: opFailed, Err: err.Error()})
		return 126
	}
	// Where Landlock cannot refuse named Unix sockets, the connect
	// filter's files go to ralph with the ready message.
	supervision, err := superviseConnects()
	if err != nil {
		send(conn, message{Op: opFailed, Err: err.Error()})
		return 126
	}
	err = send(conn, message{Op: opReady}, supervision...)
	closeAll(supervision)
	if err != nil {
		return 1
	}
	// The helper is the subreaper of last resort (see reaper_linux.go).
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		send(conn, message{Op: opFailed, Err: fmt.Sprintf("cannot watch the commands' processes: %v", err)})
		return 126
	}
	h.serve()
	return 0
}

// confine applies the policy to the helper itself, and through it to
// every command it starts.
func confine(s spec) error {
	if !s.Landlocked {
		if !s.Network {
			if err := loopbackUp(); err != nil {
				return nsError(fmt.Errorf("cannot bring up the loopback interface of the private network: %w", err))
			}
		}
		if err := mountProtected(s); err != nil {
			return nsError(err)
		}
	}
	if err := shield(); err != nil {
		return err
	}
	if err := restrict(s); err != nil {
		return err
	}
	// The ambient capabilities the helper was started with would pass
	// on to every command; they are per thread, so cleared on all.
	if err := ll.AllThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot drop the sandbox helper's capabilities: %w", err)
	}
	return nil
}

// nsError marks an error of the namespaces' making as namespacesFailed
// when the kernel denied the right to use them (EPERM, EACCES), so that
// ralph falls back to Landlock alone.
func nsError(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("%s%w", namespacesFailed, err)
	}
	return err
}

// shield keeps the commands from taking over the helper, which runs with
// their confinement and their user id: commands could otherwise attach to
// it with ptrace (or /proc/PID/mem) and send ralph false answers. A
// process that is not dumpable can be traced only with CAP_SYS_PTRACE.
//
// It also leaves the commands no capability at all, even run as root (in
// the Landlock-only sandbox, real root; in the default sandbox, root of a
// user namespace that maps every id): the bounding set is emptied and the
// inheritable set cleared, so executing a program as root grants nothing,
// and no_new_privs (set by Landlock) makes set-user-ID and file
// capabilities grant nothing either. The helper keeps its own effective
// capabilities, which it needs to give each command a PID namespace. A
// helper without the capability to drop them (no user namespace, not
// root) holds none to pass on.
func shield() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot protect the sandbox helper: %w", err)
	}
	// The bounding set is per thread and a command inherits the one of
	// the thread that forks it, so it is dropped on every thread. The
	// kernel answers EINVAL past its last capability.
	for c := 0; ; c++ {
		err := ll.AllThreadsPrctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break
		}
		if errors.Is(err, unix.EPERM) {
			break // no CAP_SETPCAP, so no capability to pass on
		}
		if err != nil {
			return fmt.Errorf("cannot drop the sandbox's capabilities: %w", err)
		}
	}
	return clearInheritable()
}

// clearInheritable empties the inheritable set on every thread, where it
// is not empty already (it usually is).
func clearInheritable() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("cannot read the sandbox's capabilities: %w", err)
	}
	if data[0].Inheritable == 0 && data[1].Inheritable == 0 {
		return nil
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	_, _, errno := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	if errno != 0 {
		return fmt.Errorf("cannot drop the sandbox's capabilities: %w", errno)
	}
	return nil
}

// helper serves ralph's requests.
type helper struct {
	conn *net.UnixConn
	wmu  sync.Mutex // one writer at a time on the socket

	mu      sync.Mutex
	leaders map[uint64]int      // request id → the pid of a started, unreaped command
	status  map[uint64]*os.File // request id → its reaper's status pipe
	// pidns is true while commands get a PID namespace of their own; the
	// first start the kernel refuses one turns it off for good, and the
	// commands run under a reaper instead (see reaper_linux.go).
	pidns bool
	// pinned runs what it is sent on one thread, the one that forks
	// every command (see pin).
	pinned chan func()
}

func (h *helper) reply(m message) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	send(h.conn, m)
}

// serve handles requests until ralph closes its end (or dies), and then
// returns: the commands still running get SIGKILL from the kernel as the
// helper exits (their parent-death signal).
func (h *helper) serve() {
	for {
		m, fds, err := receive[message](h.conn)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || !isTemporary(err) {
				return
			}
			continue
		}
		switch m.Op {
		case opStart:
			h.start(m.ID, fds)
		case opReap:
			closeAll(fds)
			h.reap(m.ID)
		default:
			closeAll(fds)
		}
	}
}

func isTemporary(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && (errno == syscall.EINTR || errno == syscall.EAGAIN)
}

// start starts one command in a process group of its own, and in a PID
// namespace of its own or under a reaper. fds are the request pipe,
// stdin, stdout and stderr.
func (h *helper) start(id uint64, fds []int) {
	defer closeAll(fds)
	fail := func(format string, a ...any) { h.reply(message{Op: opStarted, ID: id, Err: fmt.Sprintf(format, a...)}) }
	if len(fds) != 4 {
		fail("bad start request: %s", text.Counted(len(fds), "file", "files"))
		return
	}
	req, err := readRequest(fds[0])
	if err != nil {
		fail("bad start request: %v", err)
		return
	}
	// The lock is held from the fork until the leader is known, so that
	// killOrphans never takes a command just started for an orphan.
	h.mu.Lock()
	var pid int
	var status *os.File
	h.onPinned(func() { pid, status, err = h.fork(req, fds[1:]) })
	if err == nil {
		h.leaders[id] = pid
		h.status[id] = status
	}
	pidns := h.pidns
	h.mu.Unlock()
	if err != nil {
		fail("cannot start %s: %v", req.Path, err)
		return
	}
	h.reply(message{Op: opStarted, ID: id, Pid: pid})
	go func() {
		// WNOWAIT leaves the leader a zombie, so its pid, and with it the
		// process group id, stays taken until ralph, having killed the
		// rest of the group, asks for the reap.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		// A reaper that was killed left its command's processes to the
		// helper; they die before ralph hears of the end. One that exited
		// had killed them all itself, and a namespace's init takes its
		// processes with it.
		if !pidns && info.Code != cldExited {
			h.killOrphans()
		}
		h.reply(message{Op: opExited, ID: id})
	}()
}

// fork starts the request's program with the streams as the init of a
// PID namespace of its own while the kernel grants one, else under a
// reaper. It returns the leader's pid and, for a reaper, the read end of
// its status pipe.
func (h *helper) fork(req request, streams []int) (int, *os.File, error) {
	// The reaper's exec of the program would fail where ralph cannot see
	// it, so a program that cannot run is refused here, as exec would.
	path := req.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(req.Dir, path)
	}
	if err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS); err != nil {
		return 0, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, nil, err
	}
	defer w.Close()
	attr := &syscall.ProcAttr{
		Dir:   req.Dir,
		Env:   req.Env,
		Files: []uintptr{uintptr(streams[0]), uintptr(streams[1]), uintptr(streams[2]), w.Fd()},
		// The parent-death signal ends a command whose helper died, as
		// ralph's own commands end when ralph dies. The kernel sends it
		// when the thread that forked ends; the pinned thread ends only
		// with the helper. In a new PID namespace, Go's check that the
		// parent still lives (getppid, which is 0 there) makes the child
		// signal itself, which the kernel ignores for a namespace's init.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	if h.pidns {
		// The program itself is the namespace's init: a reaper there
		// would cost every command an exec of ralph's binary.
		attr.Sys.Cloneflags = pidNamespaceFlag
		files := attr.Files
		attr.Files = files[:3]
		pid, err := syscall.ForkExec(req.Path, req.Args, attr)
		if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EINVAL) {
			r.Close()
			return pid, nil, err
		}
		h.pidns = false
		attr.Sys.Cloneflags, attr.Files = 0, files
	}
	pid, err := syscall.ForkExec("/proc/self/exe", reaperArgs(req.Path, req.Args), attr)
	if err != nil {
		r.Close()
		return 0, nil, err
	}
	return pid, r, nil
}

// reap collects a command's leader and reports the command's wait
// status: under a reaper, the one the reaper wrote, or the reaper's own
// where it was killed before it could.
func (h *helper) reap(id uint64) {
	h.mu.Lock()
	pid, ok := h.leaders[id]
	status := h.status[id]
	delete(h.leaders, id)
	delete(h.status, id)
	h.mu.Unlock()
	if !ok {
		h.reply(message{Op: opReaped, ID: id, Err: "no such command"})
		return
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	// A reaper has exited, so its pipe holds all it wrote.
	if status != nil {
		var b [4]byte
		if n, _ := io.ReadFull(status, b[:]); n == len(b) {
			ws = syscall.WaitStatus(*(*uint32)(unsafe.Pointer(&b[0])))
		}
		status.Close()
	}
	h.reply(message{Op: opReaped, ID: id, Status: ws})
}

// readRequest reads the command line and environment from the request
// pipe.
func readRequest(fd int) (request, error) {
	var req request
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return req, err
	}
	f := os.NewFile(uintptr(dup), "request")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRequest+1))
	if err != nil {
		return req, err
	}
	if len(b) > maxRequest {
		return req, errors.New("the command and its environment are too large")
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return req, err
	}
	if req.Path == "" || len(req.Args) == 0 {
		return req, errors.New("no program")
	}
	return req, nil
}

// mountProtected pins and protects paths in the helper's private mount
// namespace. Landlock grants access by hierarchy and cannot take back a
// sub-path of a writable root, so the read-only sub-paths are bind mounts:
// a read-only mount refuses every write whatever Landlock allows, and a
// mount point cannot be renamed, removed or replaced, which stops the
// command from moving .git aside and building another. The mounts exist
// only in this namespace: the person, and ralph, see nothing of them.
func mountProtected(s spec) error {
	if len(s.Pin)+len(s.Protect)+len(s.Mask)+len(s.Cover) == 0 {
		return nil
	}
	// Mounts made here must never reach the parent namespace; a namespace
	// created in a new user namespace is a slave already, and this makes
	// sure of it.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("cannot make the mount namespace private: %w", err)
	}
	for _, p := range s.Pin {
		if err := bindSelf(p, false); err != nil {
			return err
		}
	}
	for _, p := range s.Protect {
		if err := bindSelf(p, true); err != nil {
			return err
		}
	}
	// On top of the read-only binds: the masked copies, and the covers
	// over what the person's Read(…) deny rules name.
	if err := mountMasked(s.Mask); err != nil {
		return err
	}
	return mountCovered(s.Cover)
}

// bindSelf binds path onto itself, read-only if asked. The path is opened
// without following symbolic links and mounted through /proc/self/fd, so
// a link swapped in after ralph looked cannot redirect the mount. A path
// that vanished since ralph looked is skipped: Finish deals with what is
// created in its place.
func bindSelf(path string, readOnly bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		return fmt.Errorf("%s is a symbolic link, which the sandbox cannot keep read-only", path)
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	err = unix.Mount(self, self, "", unix.MS_BIND|unix.MS_REC, "")
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("cannot bind %s: %w", path, err)
	}
	if !readOnly {
		return nil
	}
	// The new mount is on top now, so opening the path again reaches it;
	// being a mount point, it cannot have been swapped meanwhile.
	fd, err = unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return fmt.Errorf("cannot inspect %s: %w", path, err)
	}
	// A remount inside a user namespace must keep the flags that the
	// original mount had locked (nosuid, nodev, noexec, atime), or it
	// fails with EPERM.
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for st, ms := range map[int64]uintptr{
		unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC,
		unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME,
	} {
		if fs.Flags&st != 0 {
			flags |= ms
		}
	}
	self = "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount("", self, "", flags, ""); err != nil {
		return fmt.Errorf("cannot make %s read-only: %w", path, err)
	}
	return nil
}

// restrict applies Landlock: read and execute everywhere but the secret
// paths (readRules), write only in the spec's directories and the
// harmless devices. It refuses to run without Landlock rather than run
// unconfined: go-landlock's best effort mode would silently enforce
// nothing on such a kernel.
func restrict(s spec) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return errors.New("this Linux kernel has no Landlock (it needs Linux 5.13 or later with landlock in its lsm= boot list)")
	}
	// Network rules are left out on purpose: with the network on, TCP and
	// UDP stay open; without it the command has a network namespace of
	// its own, which closes every protocol, not only TCP.
	args := []any{landlock.V11.HandledAccessFS, landlock.V11.Scoped}
	if s.Landlocked && !s.Network {
		// Without a network namespace, Landlock's own network rules
		// shut TCP: handled and granted to nothing, so every TCP
		// connect and bind is refused. The socket filter refuses every
		// other kind of IP socket (filterRules.noNetwork).
		args = append(args, landlock.V11.HandledAccessNet)
	}
	cfg, err := landlock.NewConfig(args...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	rules := append(readRules(slices.Concat(helperUnix.HiddenPaths, s.Hide)), landlock.RWFiles(devices...).IgnoreIfMissing())
	if len(s.Write) > 0 {
		// Moving files between directories (git moves objects into
		// place) needs "refer", which Landlock 1 cannot grant: asking for
		// it there would make best effort fall back to no sandbox at all.
		rules = append(rules, writeRules(s.Write, s.Kept, abi >= 2)...)
	}
	rules = append(rules, resolveUnixRules(abi)...)
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// loopbackUp brings up lo in the private network namespace, so a command
// can still talk to servers it starts itself (tests often do) while the
// machine's own and every other network stay out of reach.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
