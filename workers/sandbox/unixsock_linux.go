package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ralph-dev/ralph/memory/text"
	"golang.org/x/sys/unix"
)

// connectSupervisor is ralph's side of the connect filter: every
// connect(2) of a sandboxed command waits in the kernel until ralph
// answers it here.
//
// ralph never lets a command's own connect go ahead (no
// SECCOMP_USER_NOTIF_FLAG_CONTINUE for a command): the address lives in
// the command's memory, and another of its threads could rewrite it
// between ralph's look and the kernel's. Instead ralph takes a copy of
// the command's socket (pidfd_getfd: the same open file description, so
// the same socket, its network namespace fixed when it was made, its
// O_NONBLOCK shared) and connects that copy to the address ralph read and
// judged, and answers with the result. That holds for every family, TCP
// too, since the family itself could be rewritten.
//
// Who makes the connect matters where the kernel looks at the connecting
// process rather than the socket:
//
//   - a named Unix socket's server sees the connecting process as its
//     peer (SO_PEERCRED), and ralph's own control socket, inside the
//     project, would take ralph for itself and obey it. The helper, a
//     process of the sandbox, makes those connects, once ralph has
//     judged them (mayConnect);
//   - Landlock judges a connect by the connecting process's domain, and
//     ralph is in none: an abstract socket's connect would escape
//     Landlock's scope, so ralph judges those itself as the scope would
//     (connectAbstract); and where the sandbox shuts the network with
//     Landlock's rules rather than a namespace, the helper makes every
//     other connect too.
type connectSupervisor struct {
	policy   *Policy
	helper   int // the helper's pid
	listener int // the filter's notification listener
	conn     *net.UnixConn
	diag     int // sock_diag in the sandbox's network namespace
	sameNet  bool

	wake     int // an eventfd that ends the loop
	stopping chan struct{}
	done     chan struct{}
	slots    chan struct{} // bounds the notifications handled at once
	handlers sync.WaitGroup
	stopOnce sync.Once

	mu       sync.Mutex
	nextID   uint64
	pending  map[uint64]chan unix.Errno
	gone     bool
	hostDiag int // sock_diag in ralph's own namespace, opened when first needed

	diagMu sync.Mutex // one dump at a time on each sock_diag socket
}

// maxConnectHandlers bounds the connects in progress at once. Each blocked
// connect holds a thread of ralph's; past the bound, further connects wait
// in the kernel's queue until one is done. A command that opens thousands
// of connections to an address that never answers slows only itself.
const maxConnectHandlers = 256

// startConnectSupervisor starts serving the notifications of a helper
// whose ready message came with fds (listener, connect channel, sock_diag
// socket); with none, the helper needs no supervisor and nil is returned.
func startConnectSupervisor(p *Policy, helper int, fds []int) (*connectSupervisor, error) {
	if len(fds) == 0 {
		return nil, nil
	}
	if len(fds) != 3 {
		closeAll(fds)
		return nil, fmt.Errorf("%w: its helper sent %s with its ready message", ErrUnavailable, text.Counted(len(fds), "file", "files"))
	}
	f := os.NewFile(uintptr(fds[1]), "connect")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[2])
		return nil, fmt.Errorf("%w: connect channel: %w", ErrUnavailable, err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		c.Close()
		unix.Close(fds[0])
		unix.Close(fds[2])
		return nil, fmt.Errorf("%w: eventfd: %w", ErrUnavailable, err)
	}
	s := &connectSupervisor{
		policy: p, helper: helper, listener: fds[0], conn: c.(*net.UnixConn), diag: fds[2], wake: wake,
		stopping: make(chan struct{}), done: make(chan struct{}), slots: make(chan struct{}, maxConnectHandlers),
		pending: map[uint64]chan unix.Errno{}, hostDiag: -1,
	}
	s.sameNet = sameNetNamespace(s.diag)
	// Answers wake the command on ralph's CPU at once, as a reply to a
	// call (Linux 6.6); older kernels refuse the flag and wake it as
	// any other.
	unix.Syscall(unix.SYS_IOCTL, uintptr(s.listener), seccompIoctlNotifSetFlags, seccompUserNotifFDSyncWakeUp)
	go s.readReplies()
	go s.loop()
	return s, nil
}

// stop ends the supervisor. Notifications still waiting are answered by
// the kernel (ENOSYS) once the listener is closed, which happens when the
// last handler is done with it.
func (s *connectSupervisor) stop() {
	if s == nil {
		return
	}
	s.stopOnce.Do(func() {
		close(s.stopping)
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(s.wake, one[:])
		<-s.done
		s.conn.Close()
		go func() {
			s.handlers.Wait()
			unix.Close(s.listener)
			unix.Close(s.diag)
			unix.Close(s.wake)
			s.mu.Lock()
			if s.hostDiag >= 0 {
				unix.Close(s.hostDiag)
			}
			s.mu.Unlock()
		}()
	})
}

// loop receives the notifications until stop, or until no process uses
// the filter any more (the listener hangs up). One goroutine at a time
// receives; it answers what it received and leaves receiving to a new one.
func (s *connectSupervisor) loop() {
	receiving := true
	defer func() {
		if receiving {
			close(s.done)
		}
	}()
	pfd := []unix.PollFd{{Fd: int32(s.listener), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
	for {
		pfd[0].Revents, pfd[1].Revents = 0, 0
		if _, err := unix.Poll(pfd, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if pfd[1].Revents != 0 {
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return
			}
			continue
		}
		var n seccompNotif
		if err := ioctlPtr(s.listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			// ENOENT: the command was interrupted before it was
			// received; the kernel restarts or fails its connect.
			if err == unix.ENOENT || err == unix.EINTR {
				continue
			}
			return
		}
		select {
		case s.slots <- struct{}{}:
		case <-s.stopping:
			return
		}
		// This goroutine answers the notification itself and a new one
		// takes over receiving: the answer, which may block in a slow
		// connect, holds up no other connect, and the command waiting
		// for it waits for no hand-over to another goroutine.
		s.handlers.Add(1)
		receiving = false
		go s.loop()
		s.answer(n)
		<-s.slots
		s.handlers.Done()
		return
	}
}

// answer judges one notification and sends the result.
func (s *connectSupervisor) answer(n seccompNotif) {
	errno, cont := s.judge(n)
	resp := seccompNotifResp{ID: n.ID}
	if cont {
		resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	} else {
		resp.Error = -int32(errno)
	}
	// ENOENT: the command is gone or was interrupted, and the answer
	// concerns nobody any more.
	_ = ioctlPtr(s.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// valid reports whether the notification still waits for its answer:
// then the thread that made it is alive and blocked, so its tid, and what
// was read through it, was that thread's.
func (s *connectSupervisor) valid(id uint64) bool {
	return ioctlPtr(s.listener, seccompIoctlNotifIDValid, unsafe.Pointer(&id)) == nil
}

// connectCall is a connect's arguments.
type connectCall struct {
	fd      int
	addr    uint64
	addrlen int
}

// judge decides one notification: the errno to answer with, or cont for
// the helper's own connects. Anything that cannot be done (the command
// gone, its memory unreadable, its socket not to be had) refuses the
// connect with EACCES: the check fails closed.
func (s *connectSupervisor) judge(n seccompNotif) (unix.Errno, bool) {
	tid := int(n.Pid)
	if s.helperBusy() && s.isHelperThread(tid) {
		return 0, s.valid(n.ID)
	}
	pidfd, err := openPidfd(tid)
	if err != nil {
		return unix.EACCES, false
	}
	defer unix.Close(pidfd)
	if !s.valid(n.ID) {
		return unix.EACCES, false
	}
	call, errno := s.callOf(tid, n)
	if errno != 0 {
		return errno, false
	}
	sock, err := unix.PidfdGetfd(pidfd, call.fd, 0)
	if err == unix.EBADF {
		return unix.EBADF, false
	}
	if err != nil {
		return unix.EACCES, false
	}
	defer unix.Close(sock)
	// The kernel copies at most a sockaddr_storage, and refuses more.
	if call.addrlen < 0 || call.addrlen > 128 {
		return unix.EINVAL, false
	}
	addr := make([]byte, call.addrlen)
	if len(addr) > 0 {
		if errno := readMemory(tid, call.addr, addr); errno != 0 {
			return errno, false
		}
	}
	if !s.valid(n.ID) {
		return unix.EACCES, false
	}
	if len(addr) >= 2 && binary.NativeEndian.Uint16(addr) == unix.AF_UNIX {
		return s.connectUnix(tid, sock, addr), false
	}
	// ralph may make any other connect itself only where the sandbox's
	// Landlock domain does not govern the network: with the network on,
	// or with a network namespace of the sandbox's own (the socket's,
	// whoever connects it). A sandbox without the network and without
	// that namespace shuts the network with Landlock's own rules, which
	// only the helper's connect meets.
	if s.policy.Network || !s.sameNet {
		return connectRaw(sock, addr), false
	}
	return s.viaHelper(sock, -1, addr), false
}

// callOf reads the connect's arguments: from the registers, or for
// socketcall (32-bit x86 and arm) from the array they point to.
func (s *connectSupervisor) callOf(tid int, n seccompNotif) (connectCall, unix.Errno) {
	for _, c := range filterArchs {
		if c.arch != n.Data.Arch {
			continue
		}
		nr := uint32(n.Data.Nr)
		if c.mask != 0 {
			nr &= c.mask
		}
		switch {
		case nr == c.connect:
			a := n.Data.Args
			return connectCall{fd: int(int32(a[0])), addr: a[1], addrlen: int(int32(a[2]))}, 0
		case c.socketcall != 0 && nr == c.socketcall:
			var b [12]byte // three 32-bit unsigned longs: fd, address, length
			if errno := readMemory(tid, n.Data.Args[1], b[:]); errno != 0 {
				return connectCall{}, errno
			}
			return connectCall{
				fd:      int(int32(binary.LittleEndian.Uint32(b[0:]))),
				addr:    uint64(binary.LittleEndian.Uint32(b[4:])),
				addrlen: int(int32(binary.LittleEndian.Uint32(b[8:]))),
			}, 0
		}
	}
	return connectCall{}, unix.EACCES
}

// connectUnix judges and makes a connect to a Unix socket. A named one is
// judged here (mayConnect) and reached, by the helper, through the
// descriptor that was judged. An abstract one is judged as Landlock's
// scope would (connectAbstract).
func (s *connectSupervisor) connectUnix(tid, sock int, addr []byte) unix.Errno {
	switch {
	case len(addr) <= 2:
		return s.viaHelper(sock, -1, addr) // no name: the kernel's EINVAL
	case addr[2] == 0:
		return s.connectAbstract(tid, sock, addr)
	}
	path := addr[2:]
	if i := strings.IndexByte(string(path), 0); i >= 0 {
		path = path[:i]
	}
	fd, errno := openAsTarget(tid, string(path))
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	if errno, place := s.mayConnect(fd); errno != 0 {
		if errno == unix.EACCES {
			s.refused(tid, place)
		}
		return errno
	}
	return s.viaHelper(sock, fd, nil)
}

// openAsTarget opens path (O_PATH) as the command would look it up: an
// absolute path from its root, a relative one from its working directory.
// The final component is followed, as connect follows it, and what is
// judged is the socket file reached, through the descriptor returned, so
// a link swapped afterwards changes nothing. Magic links (/proc/self/fd/N,
// which would name ralph's descriptors here) are refused.
func openAsTarget(tid int, path string) (int, unix.Errno) {
	base := "/proc/" + strconv.Itoa(tid) + "/cwd"
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	if strings.HasPrefix(path, "/") {
		base = "/proc/" + strconv.Itoa(tid) + "/root"
		how.Resolve |= unix.RESOLVE_IN_ROOT
		if path = strings.TrimLeft(path, "/"); path == "" {
			path = "."
		}
	}
	dir, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, unix.EACCES
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, path, &how)
	switch {
	case err == nil:
		return fd, 0
	case err == unix.ENOENT, err == unix.ENOTDIR, err == unix.ENAMETOOLONG:
		return -1, err.(unix.Errno)
	}
	return -1, unix.EACCES
}

// mayConnect judges the socket file open at fd (O_PATH): 0 lets the
// connect go ahead. place is where the socket was judged to lie.
//
// A socket may be reached when it lies under the project root or is one
// the person listed (sandbox_unix_sockets), or when a process of this
// sandbox listens on it (a test suite's server in $TMPDIR). Where it lies
// is where its server bound it, when the kernel says (sock_diag), not the
// name the command used: a command may hard-link or move a socket file
// into the project (the ssh agent's socket in /tmp is the person's own,
// and often on the same file system). The bound name and the listener
// belong to the socket for its life, and the descriptor keeps the socket
// file from being replaced, so the judgement cannot be raced.
func (s *connectSupervisor) mayConnect(fd int) (errno unix.Errno, place string) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return unix.EACCES, ""
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return unix.ECONNREFUSED, "" // what connect says of a file that is not a socket
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return unix.EACCES, ""
	}
	l, found := s.listenerOf(fd, &st)
	places := []string{real}
	if strings.HasSuffix(real, " (deleted)") {
		places = nil
	}
	if found && boundName(l.name) {
		places = boundPlaces(l.name)
	}
	for _, place := range places {
		if s.policy.unixSocketAllowed(place) {
			return 0, place
		}
	}
	if found && l.sandboxNet && s.couldBind(l.name) && s.heldBySandbox(l.ino) {
		return 0, real
	}
	if len(places) > 0 {
		return unix.EACCES, places[len(places)-1]
	}
	return unix.EACCES, strings.TrimSuffix(real, " (deleted)")
}

// couldBind reports whether a command could have bound a socket by this
// name: Landlock lets commands make socket files only where they may
// write. It spares the look through /proc for the sockets commands meet
// most, the system's own (nscd's, systemd's, the journal's), which a
// program tries and does without.
func (s *connectSupervisor) couldBind(name string) bool {
	if !boundName(name) {
		return true // a relative name, or one through /proc: it cannot be told
	}
	for _, place := range boundPlaces(name) {
		if within(s.policy.Root, place) {
			return true
		}
		for _, d := range s.policy.Writable {
			if within(d, place) {
				return true
			}
		}
	}
	return false
}

// refused remembers a refused connect for the note to the model (see
// Explain), under the command's process group.
func (s *connectSupervisor) refused(tid int, what string) {
	if what == "" {
		return
	}
	pgid, err := unix.Getpgid(tid)
	if err != nil {
		return
	}
	s.policy.refused(pgid, what)
}

// connectAbstract connects sock to an abstract Unix socket if a process
// of this sandbox serves it, and refuses with EPERM, as Landlock's scope
// does, otherwise.
//
// The helper cannot make this connect for the command as it makes named
// ones: Landlock gives each thread that restricts itself a domain of its
// own (before ABI 8 there is no way to restrict a process at once), so
// the helper's thread and the one that started the command are unrelated
// domains, and the scope would refuse the command's own servers. ralph
// makes it, outside every domain, and so judges it itself: before, the
// socket bound to the name must be held by a process of the sandbox;
// after, the peer the connect reached must be that socket (a datagram
// socket's peer) or have been set up by a process of the sandbox (a
// stream server's credentials), since a name can be bound again in
// between. A connect that reached anything else is shut down at once.
func (s *connectSupervisor) connectAbstract(tid, sock int, addr []byte) unix.Errno {
	typ, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return unix.EACCES
	}
	l, found := s.abstractListener(string(addr[2:]), typ)
	if !found || !s.heldBySandbox(l.ino) {
		s.refused(tid, "@"+strings.ReplaceAll(string(addr[3:]), "\x00", "@"))
		return unix.EPERM
	}
	if errno := connectRaw(sock, addr); errno != 0 {
		return errno
	}
	if !s.reachedSandbox(sock, typ, l.ino) {
		unix.Shutdown(sock, unix.SHUT_RDWR)
		return unix.EPERM
	}
	return 0
}

// reachedSandbox reports whether sock, just connected, reached the
// socket ino or a server of this sandbox.
func (s *connectSupervisor) reachedSandbox(sock, typ int, ino uint32) bool {
	if typ == unix.SOCK_DGRAM {
		peer, ok := s.peerOf(sock)
		return ok && peer == ino
	}
	cred, err := unix.GetsockoptUcred(sock, unix.SOL_SOCKET, unix.SO_PEERCRED)
	return err == nil && cred.Pid > 0 && descendsFrom(int(cred.Pid), s.helper)
}

// boundName reports whether a socket's bound name says where it lies: an
// absolute path not spelled through /proc (a server may bind through a
// descriptor's magic link when the path is too long for sun_path).
func boundName(name string) bool {
	return strings.HasPrefix(name, "/") && !strings.HasPrefix(name, "/proc/")
}

// boundPlaces is where a socket bound as name lies: the name cleaned, and
// with its directory's symbolic links resolved (/var/run is a link to
// /run on most systems).
func boundPlaces(name string) []string {
	clean := filepath.Clean(name)
	places := []string{clean}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(clean)); err == nil {
		if r := filepath.Join(dir, filepath.Base(clean)); r != clean {
			places = append(places, r)
		}
	}
	return places
}

// viaHelper has the helper connect sock, to the socket file open at fd
// (when fd >= 0) or to addr, and returns its result.
func (s *connectSupervisor) viaHelper(sock, fd int, addr []byte) unix.Errno {
	reply := make(chan unix.Errno, 1)
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return unix.EACCES
	}
	s.nextID++
	id := s.nextID
	s.pending[id] = reply
	s.mu.Unlock()
	fds := []int{sock}
	if fd >= 0 {
		fds = append(fds, fd)
	}
	if err := send(s.conn, connectMsg{ID: id, Addr: addr}, fds...); err != nil {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
		return unix.EACCES
	}
	return <-reply
}

// readReplies routes the helper's answers to the connects waiting for
// them, and fails them all once the helper is gone.
func (s *connectSupervisor) readReplies() {
	for {
		m, fds, err := receive[connectMsg](s.conn)
		closeAll(fds)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) && isTemporary(err) {
				continue
			}
			break
		}
		s.mu.Lock()
		reply := s.pending[m.ID]
		delete(s.pending, m.ID)
		s.mu.Unlock()
		if reply != nil {
			reply <- unix.Errno(m.Errno)
		}
	}
	s.mu.Lock()
	s.gone = true
	pending := s.pending
	s.pending = map[uint64]chan unix.Errno{}
	s.mu.Unlock()
	for _, reply := range pending {
		reply <- unix.EACCES
	}
}

// helperBusy reports whether the helper has a connect to make for ralph:
// only then can a notification be the helper's own, and looking that up
// in /proc can be spared every other connect.
func (s *connectSupervisor) helperBusy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) > 0
}

// isHelperThread reports whether tid is a thread of the helper, whose own
// connects (made for a command, to an address ralph sent) go ahead.
func (s *connectSupervisor) isHelperThread(tid int) bool {
	if tid == s.helper {
		return true
	}
	_, err := os.Lstat("/proc/" + strconv.Itoa(s.helper) + "/task/" + strconv.Itoa(tid))
	return err == nil
}

// openPidfd opens a pidfd for the thread tid: the thread itself where the
// kernel allows (PIDFD_THREAD, Linux 6.9), else its process, whose
// descriptor table its threads share.
func openPidfd(tid int) (int, error) {
	const pidfdThread = unix.O_EXCL
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if err == nil {
		return fd, nil
	}
	tgid, terr := threadGroup(tid)
	if terr != nil {
		return -1, fmt.Errorf("pidfd: %w", err)
	}
	return unix.PidfdOpen(tgid, 0)
}

// readMemory reads the command's memory at addr into b.
func readMemory(tid int, addr uint64, b []byte) unix.Errno {
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(len(b))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	n, err := unix.ProcessVMReadv(tid, local, remote, 0)
	switch {
	case err == unix.EFAULT:
		return unix.EFAULT
	case err == nil && n != len(b):
		return unix.EFAULT // a part of it is not mapped
	case err != nil:
		return unix.EACCES
	}
	return 0
}

// ioctlPtr is ioctl(2) with a pointer argument.
func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// groupGone reports whether no process is left in process group pgid.
func groupGone(pgid int) bool {
	return pgid <= 0 || unix.Kill(-pgid, 0) == unix.ESRCH
}
