package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// server is ralph's side of one helper process.
type server struct {
	key  string
	cmd  *exec.Cmd
	conn *net.UnixConn
	wmu  sync.Mutex // one writer at a time on the socket
	done chan struct{}
	// connects answers the connects of the helper's commands, where the
	// helper installed the connect filter (see connectSupervisor).
	connects *connectSupervisor

	mu      sync.Mutex
	procs   map[uint64]*Process
	nextID  uint64
	users   int
	retired bool
	dead    error // why the helper is gone, once it is
}

// startServer starts a helper for the spec key and waits until it has
// confined itself.
func startServer(ctx context.Context, p *Policy, sp spec, key string) (*server, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socket pair: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "sandbox"), os.NewFile(uintptr(fds[1]), "sandbox-helper")
	// Only the helper may hold its end once it started: then its exit
	// is an end of file here, not a silence.
	defer theirs.Close()
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	conn := c.(*net.UnixConn)

	helper := p.Helper
	if helper == "" {
		helper = "/proc/self/exe"
	}
	cmd := &exec.Cmd{
		Path:       helper,
		Args:       []string{"ralph", HelperArg, helperArgument(key, p)},
		Dir:        p.Root,
		ExtraFiles: []*os.File{theirs}, // descriptor 3, helperFD
		// Each command gets its environment with its request; the helper
		// needs none, and ralph's own may hold the model's key.
		Env: []string{},
		// Its own process group keeps a Ctrl-C on the terminal from
		// reaching it; the parent-death signal ends it with ralph.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	namespaces(cmd.SysProcAttr, sp)
	userns := cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWUSER != 0
	if userns && os.Getenv(NoUserNamespacesEnv) != "" {
		err = syscall.EPERM // as the kernel refuses them (see NoUserNamespacesEnv)
	} else {
		err = cmd.Start()
	}
	theirs.Close()
	if err != nil {
		conn.Close()
		if userns && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EINVAL)) {
			return nil, fmt.Errorf("%w: %w: %v", ErrUnavailable, errNamespaces, err)
		}
		return nil, fmt.Errorf("%w: cannot start its helper %s: %v", ErrUnavailable, helper, err)
	}
	s := &server{key: key, cmd: cmd, conn: conn, done: make(chan struct{}), procs: map[uint64]*Process{}}

	// The first message says whether the helper could confine itself.
	first := make(chan error, 1)
	readyFiles := make(chan []int, 1) // the ready message's files, sent before first
	go func() {
		m, fds, err := receive[message](conn)
		if err != nil || m.Op != opReady {
			closeAll(fds)
			fds = nil
		}
		readyFiles <- fds
		switch {
		case err != nil:
			first <- fmt.Errorf("%w: its helper did not start (the program %s does not handle %s)", ErrUnavailable, helperName(p), HelperArg)
		case m.Op == opFailed:
			if strings.HasPrefix(m.Err, namespacesFailed) {
				first <- fmt.Errorf("%w: %w: %s", ErrUnavailable, errNamespaces, m.Err)
				break
			}
			first <- fmt.Errorf("%w: %s", ErrUnavailable, m.Err)
		case m.Op != opReady:
			first <- fmt.Errorf("%w: its helper said %q", ErrUnavailable, m.Op)
		default:
			first <- nil
		}
	}()
	timer := time.NewTimer(helperStartWait)
	defer timer.Stop()
	select {
	case err = <-first:
	case <-timer.C:
		err = fmt.Errorf("%w: its helper did not start within %s", ErrUnavailable, helperStartWait)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		// The ready message's files, if any, are the connect filter's.
		s.connects, err = startConnectSupervisor(p, cmd.Process.Pid, <-readyFiles)
	} else {
		go func() { closeAll(<-readyFiles) }()
	}
	if err != nil {
		conn.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	go s.read()
	return s, nil
}

// NoUserNamespacesEnv, set to anything, makes ralph act as if the kernel
// refused user namespaces, as Ubuntu's AppArmor default does: the way to
// try the Landlock-only sandbox on a machine that has them.
const NoUserNamespacesEnv = "RALPH_SANDBOX_NO_USERNS"

// errNamespaces says the kernel allows this process no user namespace
// (or none that may mount): the runner falls back to Landlock alone.
var errNamespaces = errors.New("user namespaces are not allowed here")

// namespacesFailed starts the helper's word that it got its namespaces
// but no right to use them: AppArmor's restriction lets the namespace be
// made and then denies it every capability.
const namespacesFailed = "namespaces: "

// namespaces adds the namespaces the spec needs: a mount namespace for
// the read-only binds and the masked copies of the repositories'
// configuration, a network namespace without the network, and the
// user namespace that lets an unprivileged helper create the others. The
// commands keep the person's user id.
func namespaces(attr *syscall.SysProcAttr, s spec) {
	if s.Landlocked {
		return
	}
	var flags uintptr
	if len(s.Pin)+len(s.Protect)+len(s.Mask)+len(s.Cover) > 0 {
		flags |= syscall.CLONE_NEWNS
	}
	if !s.Network {
		flags |= syscall.CLONE_NEWNET
	}
	if flags == 0 {
		return
	}
	attr.Cloneflags |= flags | syscall.CLONE_NEWUSER
	// The helper gets every capability in its new user namespace, but
	// executing it as anyone but root in there clears them: ambient
	// capabilities carry over what it needs for the mounts, the loopback
	// interface and the bounding set. It drops them all before it starts
	// any command.
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		// Root maps every id, so that files owned by others stay
		// theirs (and writable by root) inside the namespace too.
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.GidMappingsEnableSetgroups = true
	} else {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
}

// read routes the helper's messages to the processes they concern, until
// the helper is gone.
func (s *server) read() {
	var err error
	for {
		var m message
		var fds []int
		m, fds, err = receive[message](s.conn)
		closeAll(fds)
		if err != nil {
			break
		}
		s.mu.Lock()
		p := s.procs[m.ID]
		s.mu.Unlock()
		if p != nil {
			p.deliver(m)
		}
	}
	s.conn.Close()
	s.cmd.Wait()
	s.mu.Lock()
	if s.dead == nil {
		s.dead = errors.New("the sandbox helper stopped (a command may have killed it); the command was killed with it")
	}
	procs := s.procs
	s.procs = map[uint64]*Process{}
	s.mu.Unlock()
	for _, p := range procs {
		p.lost()
	}
	close(s.done)
}

// acquire counts one more user, unless the helper is retired or dead.
func (s *server) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired || s.dead != nil {
		return false
	}
	s.users++
	return true
}

// release counts one user less and stops a retired helper nobody uses.
func (s *server) release() {
	s.mu.Lock()
	s.users--
	last := s.retired && s.users == 0
	s.mu.Unlock()
	if last {
		s.stop()
	}
}

// retire lets the helper finish its commands and stop after them.
func (s *server) retire() {
	s.mu.Lock()
	s.retired = true
	idle := s.users == 0
	s.mu.Unlock()
	if idle {
		s.stop()
	}
}

// running reports whether the helper is alive and not stopped: a slow
// helper still answers, one that a command stopped (SIGSTOP, T) or
// traced (t) never will.
func (s *server) running() bool {
	state, _, ok := statOf(s.cmd.Process.Pid)
	return ok && state != 'T' && state != 't' && state != 'Z' && state != 'X'
}

// stop ends the helper: closing the socket makes it exit, and killing it
// makes sure of that even if a command stopped it with SIGSTOP.
func (s *server) stop() {
	s.mu.Lock()
	if s.dead == nil {
		s.dead = errors.New("the sandbox helper was stopped")
	}
	s.mu.Unlock()
	s.conn.Close()
	s.cmd.Process.Kill()
	<-s.done
	s.connects.stop()
}

// request sends one message with files attached.
func (s *server) request(m message, files ...*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	s.wmu.Lock()
	err := send(s.conn, m, fds...)
	s.wmu.Unlock()
	return err
}

// start asks the helper to start c and waits for its pid.
func (s *server) start(c Command) (*Process, error) {
	body, err := json.Marshal(request{Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// Missing streams are /dev/null, as for exec.Cmd.
	var null *os.File
	streams := []*os.File{c.Stdin, c.Stdout, c.Stderr}
	for i, f := range streams {
		if f != nil {
			continue
		}
		if null == nil {
			if null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			defer null.Close()
		}
		streams[i] = null
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: request pipe: %w", err)
	}
	defer reqR.Close()

	s.mu.Lock()
	if s.dead != nil {
		s.mu.Unlock()
		reqW.Close()
		return nil, s.dead
	}
	s.nextID++
	p := &Process{srv: s, id: s.nextID, replies: make(chan message, 3), exited: make(chan struct{})}
	s.procs[p.id] = p
	s.mu.Unlock()

	if err := s.request(message{Op: opStart, ID: p.id}, append([]*os.File{reqR}, streams...)...); err != nil {
		reqW.Close()
		s.forget(p.id)
		return nil, fmt.Errorf("sandbox: the helper is gone: %w", err)
	}
	// The request may be larger than a pipe's buffer, so it is written
	// while the helper reads it.
	go func() {
		reqW.Write(body)
		reqW.Close()
	}()
	m, err := p.await(opStarted)
	if err != nil {
		s.forget(p.id)
		return nil, err
	}
	if m.Err != "" {
		s.forget(p.id)
		return nil, errors.New(m.Err)
	}
	p.Pid = m.Pid
	return p, nil
}

func (s *server) forget(id uint64) {
	s.mu.Lock()
	delete(s.procs, id)
	s.mu.Unlock()
}

// helperName names the helper program for messages.
func helperName(p *Policy) string {
	if p.Helper != "" {
		return p.Helper
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "ralph"
}
