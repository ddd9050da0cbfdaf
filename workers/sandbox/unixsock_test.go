//go:build linux

package sandbox

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeEnv makes the test binary, started as a sandboxed command, act as a
// probe instead of running tests: the probes make exactly the system calls
// a test needs, which a shell or python would only approximate.
const probeEnv = "RALPH_SANDBOX_PROBE"

func init() {
	if mode := os.Getenv(probeEnv); mode != "" {
		os.Exit(runProbe(mode))
	}
}

// runProbe is the sandboxed side. It prints one line and exits 0 when the
// probe's system calls succeeded.
func runProbe(mode string) int {
	report := func(err error) int {
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("ok")
		return 0
	}
	switch mode {
	case "connect":
		// PROBE_ADDR is a path, or @name for an abstract socket.
		return report(dialRaw(os.Getenv("PROBE_ADDR")))
	case "serve-and-connect":
		// A server of the command's own, as a test suite starts one.
		addr := os.Getenv("PROBE_ADDR")
		l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return report(err)
		}
		if err := unix.Bind(l, &unix.SockaddrUnix{Name: addr}); err != nil {
			return report(err)
		}
		if err := unix.Listen(l, 8); err != nil {
			return report(err)
		}
		return report(dialRaw(addr))
	case "race":
		return probeRace()
	case "nested-listener":
		// A filter of the command's own with a listener would get the
		// notifications before ralph's.
		prog := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}
		fprog := unix.SockFprog{Len: 1, Filter: &prog[0]}
		unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(prog)
		if e != 0 {
			return report(e)
		}
		unix.Close(int(fd))
		return report(nil)
	case "io_uring":
		var params [120]byte
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 8, uintptr(unsafe.Pointer(&params[0])), 0)
		if e != 0 {
			return report(e)
		}
		unix.Close(int(fd))
		return report(nil)
	case "tcp":
		// PROBE_ADDR is host:port.
		c, err := net.DialTimeout("tcp", os.Getenv("PROBE_ADDR"), 5*time.Second)
		if err == nil {
			c.Close()
		}
		return report(err)
	case "tcp-loop":
		return probeTCPLoop()
	case "send-loop":
		return probeSendLoop()
	case "sockets":
		return probeSockets()
	case "families":
		return probeFamilies()
	case "keyring":
		return probeKeyring()
	}
	fmt.Println("unknown probe", mode)
	return 2
}

// dialRaw connects a new Unix stream socket to addr with a blocking
// connect(2), as C programs do.
func dialRaw(addr string) error {
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	return unix.Connect(s, &unix.SockaddrUnix{Name: addr})
}

// probeRace connects again and again to a socket inside the project while
// another thread keeps rewriting the address to one outside: ralph must
// judge and use the address it read, never one the command changed after.
func probeRace() int {
	good, bad := os.Getenv("PROBE_GOOD"), os.Getenv("PROBE_BAD")
	n, _ := strconv.Atoi(os.Getenv("PROBE_N"))
	addrOf := func(path string) [110]byte {
		var b [110]byte
		binary.NativeEndian.PutUint16(b[:], unix.AF_UNIX)
		copy(b[2:], path)
		return b
	}
	g, x := addrOf(good), addrOf(bad)
	var buf [110]byte
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				buf = g
			} else {
				buf = x
			}
		}
	}()
	ok, refused := 0, 0
	for i := 0; i < n; i++ {
		s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(s), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == 0 {
			ok++
		} else {
			refused++
		}
		unix.Close(s)
	}
	stop.Store(true)
	<-done
	fmt.Printf("ok=%d refused=%d\n", ok, refused)
	return 0
}

// probeTCPLoop times PROBE_N blocking TCP connects to a listener of its
// own on the loopback, and prints the nanoseconds they took.
func probeTCPLoop() int {
	n, _ := strconv.Atoi(os.Getenv("PROBE_N"))
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	lo := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(l, lo); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	unix.Listen(l, 128)
	sa, _ := unix.Getsockname(l)
	start := time.Now()
	for i := 0; i < n; i++ {
		c, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		err := unix.Connect(c, sa)
		for err == unix.EINTR {
			err = unix.Connect(c, sa)
		}
		// A blocking connect the kernel restarted after a signal (Go's
		// preemption signal reaches this probe too) finds the connection
		// it had begun already made: EISCONN, which Go's net package
		// takes for success as well. The connect filter's wait for its
		// supervisor widened that window (make bench once failed on it).
		if err == unix.EISCONN {
			err = nil
		}
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		a, _, err := unix.Accept(l)
		if err == nil {
			unix.Close(a)
		}
		unix.Close(c)
	}
	fmt.Println(time.Since(start).Nanoseconds())
	return 0
}

// probe runs the test binary as a probe under p, with env added, and
// returns its output and whether it exited 0.
func probe(t testing.TB, p *Policy, mode string, env ...string) (string, bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r, loaded := runners.LoadOrStore(p, NewRunner(p))
	if !loaded {
		t.Cleanup(func() { r.(*Runner).Close(); runners.Delete(p) })
	}
	proc, err := r.(*Runner).Start(context.Background(), Command{
		Path: exe, Args: []string{exe}, Dir: p.Root, Stdout: pw, Stderr: pw,
		Env: append(append(os.Environ(), probeEnv+"="+mode), env...),
	})
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatalf("probe %s: %v", mode, err)
	}
	out, _ := io.ReadAll(pr)
	pr.Close()
	<-proc.Exited()
	unix.Kill(-proc.Pid, unix.SIGKILL)
	ws, o := proc.Wait()
	if o.Err != nil {
		t.Fatalf("probe %s lost: %v", mode, o.Err)
	}
	return strings.TrimSpace(string(out)), ws.Exited() && ws.ExitStatus() == 0
}

// listener is a Unix stream server of the test's own, outside every
// sandbox, that counts the connections it accepts.
type listener struct {
	path     string
	accepted atomic.Int32
	peers    chan int // the peers' pids
}

func listen(t testing.TB, path string) *listener {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &listener{path: path, peers: make(chan int, 100)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			if raw, err := c.(*net.UnixConn).SyscallConn(); err == nil {
				raw.Control(func(fd uintptr) {
					if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
						select {
						case l.peers <- int(cred.Pid):
						default:
						}
					}
				})
			}
			c.Close()
		}
	}()
	return l
}

// supervised skips a test of the seccomp supervisor where Landlock does
// its work instead.
func supervised(t *testing.T) {
	t.Helper()
	if abi := landlockABI(); abi >= landlockResolveUnix {
		t.Skipf("Landlock ABI %d refuses named sockets itself; the supervisor is not used", abi)
	}
	if !filterSupported() {
		t.Skip("no connect filter for " + runtime.GOARCH)
	}
}

func TestNamedSocketsOutsideTheProjectAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	outside := listen(t, filepath.Join(f.outside, "daemon.sock"))
	inside := listen(t, filepath.Join(f.root, "dev.sock"))
	if err := os.Symlink(outside.path, filepath.Join(f.root, "link.sock")); err != nil {
		t.Fatal(err)
	}
	// Moved or hard-linked into the project, the socket is still the
	// outside server's: where it was bound decides.
	if err := os.Link(outside.path, filepath.Join(f.root, "hard.sock")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, addr := range []string{outside.path, "link.sock", "hard.sock", "../" + filepath.Base(f.outside) + "/daemon.sock"} {
		out, ok := probe(t, p, "connect", "PROBE_ADDR="+addr)
		if ok || !strings.Contains(out, "permission denied") {
			t.Errorf("connect %s: %q, want permission denied", addr, out)
		}
		if note := p.Explain("dial unix " + addr + ": connect: permission denied"); !strings.Contains(note, "connecting to Unix sockets outside the project is not allowed") || !strings.Contains(note, "sandbox_unix_sockets") {
			t.Errorf("note for %s: %q", addr, note)
		}
	}
	if n := outside.accepted.Load(); n != 0 {
		t.Errorf("the listener outside the project accepted %d connections", n)
	}

	for _, addr := range []string{inside.path, "dev.sock", "sub/../dev.sock"} {
		if out, ok := probe(t, p, "connect", "PROBE_ADDR="+addr); !ok {
			t.Errorf("connect %s inside the project: %q", addr, out)
		}
	}
	if n := inside.accepted.Load(); n != 3 {
		t.Errorf("the listener inside the project accepted %d connections, want 3", n)
	}
	// The server sees a process of the sandbox as its peer, never ralph
	// (this process): ralph's control socket refuses its own commands
	// by their pid.
	for range 3 {
		if pid := <-inside.peers; pid == os.Getpid() {
			t.Errorf("the peer of a sandboxed connect is ralph itself (%d)", pid)
		}
	}

	// Not a socket, no such file: what connect itself says.
	if out, _ := probe(t, p, "connect", "PROBE_ADDR="+filepath.Join(f.outside, "secret.txt")); !strings.Contains(out, "connection refused") {
		t.Errorf("connect to a file: %q", out)
	}
	if out, _ := probe(t, p, "connect", "PROBE_ADDR=missing.sock"); !strings.Contains(out, "no such file") {
		t.Errorf("connect to nothing: %q", out)
	}
}

func TestAllowedSocketsAreReachable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	allowed := listen(t, filepath.Join(f.outside, "agent.sock"))
	other := listen(t, filepath.Join(f.outside, "other.sock"))
	p := f.policy(ReadOnly, true)
	// Listed through a symbolic link to its directory, as
	// /var/run/docker.sock is.
	link := filepath.Join(f.tmp, "run")
	if err := os.Symlink(f.outside, link); err != nil {
		t.Fatal(err)
	}
	p.AllowUnixSockets(filepath.Join(link, "agent.sock"))
	for _, addr := range []string{allowed.path, filepath.Join(link, "agent.sock")} {
		if out, ok := probe(t, p, "connect", "PROBE_ADDR="+addr); !ok {
			t.Errorf("connect %s: %q", addr, out)
		}
	}
	if out, ok := probe(t, p, "connect", "PROBE_ADDR="+other.path); ok {
		t.Errorf("a socket beside the allowed one: %q", out)
	}
	if allowed.accepted.Load() != 2 || other.accepted.Load() != 0 {
		t.Errorf("accepted %d (allowed) and %d (other)", allowed.accepted.Load(), other.accepted.Load())
	}
}

func TestTheSandboxesOwnServersAreReachable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, network := range []bool{true, false} {
		p := f.policy(WorkspaceWrite, network)
		sock := filepath.Join(f.tmp, fmt.Sprintf("own-%v.sock", network))
		if out, ok := probe(t, p, "serve-and-connect", "PROBE_ADDR="+sock); !ok {
			t.Errorf("network %v: a server of the command's own in $TMPDIR: %q", network, out)
		}
		if out, ok := probe(t, p, "serve-and-connect", fmt.Sprintf("PROBE_ADDR=@ralph-test-own-%d-%v", os.Getpid(), network)); !ok {
			t.Errorf("network %v: an abstract server of the command's own: %q", network, out)
		}
	}
}

func TestAbstractSocketsOutsideTheSandboxAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	name := fmt.Sprintf("@ralph-test-outside-%d", os.Getpid())
	l := listen(t, name)
	out, ok := probe(t, f.policy(WorkspaceWrite, true), "connect", "PROBE_ADDR="+name)
	if ok || l.accepted.Load() != 0 {
		t.Errorf("an abstract socket outside the sandbox: %q, %d accepted", out, l.accepted.Load())
	}
}

func TestTCPStillConnects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ln, accepted := tcpListener(t)
	for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
		if out, ok := probe(t, f.policy(mode, true), "tcp", "PROBE_ADDR="+ln.Addr().String()); !ok {
			t.Errorf("%s: TCP to 127.0.0.1 with the network on: %q", mode, out)
		}
		if out, ok := probe(t, f.policy(mode, false), "tcp", "PROBE_ADDR="+ln.Addr().String()); ok {
			t.Errorf("%s: TCP to the test's listener without the network: %q", mode, out)
		}
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("accepted %d, want 2", n)
	}
}

func TestARewrittenAddressCannotSlipThrough(t *testing.T) {
	t.Parallel()
	supervised(t)
	f := newFixture(t)
	inside := listen(t, filepath.Join(f.root, "in.sock"))
	outside := listen(t, filepath.Join(f.outside, "out.sock"))
	out, ok := probe(t, f.policy(WorkspaceWrite, true), "race", "PROBE_GOOD="+inside.path, "PROBE_BAD="+outside.path, "PROBE_N=2000")
	if !ok {
		t.Fatalf("race probe: %q", out)
	}
	if n := outside.accepted.Load(); n != 0 {
		t.Fatalf("%d connects reached the socket outside while the address was being rewritten (%s)", n, out)
	}
	var okN, refusedN int
	fmt.Sscanf(out, "ok=%d refused=%d", &okN, &refusedN)
	if okN == 0 || refusedN == 0 {
		t.Errorf("the race never hit both ways: %s", out)
	}
	t.Logf("%s; the socket outside accepted none", out)
}

func TestCommandsCannotInterceptTheirOwnConnects(t *testing.T) {
	t.Parallel()
	supervised(t)
	p := newFixture(t).policy(WorkspaceWrite, true)
	if out, ok := probe(t, p, "nested-listener"); ok || !strings.Contains(out, "operation not permitted") {
		t.Errorf("a seccomp listener of the command's own: %q", out)
	}
	if out, ok := probe(t, p, "io_uring"); ok || !strings.Contains(out, "function not implemented") {
		t.Errorf("io_uring, whose connects no filter sees: %q", out)
	}
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1) // LANDLOCK_CREATE_RULESET_VERSION
	if e != 0 {
		return 0
	}
	return int(r)
}

// BenchmarkSandboxedConnects times a loop of 1,000 TCP connects to a
// listener on the loopback, inside one sandboxed command, with the
// connect filter and without it.
func BenchmarkSandboxedConnects(b *testing.B) { benchProbeLoop(b, "tcp-loop", 1000, "ns/connect") }

// benchProbeLoop runs the probe's loop of n operations inside one
// sandboxed command, with the connect filter and without it, and reports
// the time of one operation as unit.
func benchProbeLoop(b *testing.B, loop string, n int, unit string) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for _, filtered := range []bool{false, true} {
		name := "unfiltered"
		if filtered {
			name = "filtered"
		}
		b.Run(name, func(b *testing.B) {
			noConnectFilter = !filtered
			defer func() { noConnectFilter = false }()
			p := &Policy{Mode: WorkspaceWrite, Root: root, Network: true}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				out, ok := probe(b, p, loop, "PROBE_N="+strconv.Itoa(n))
				ns, err := strconv.ParseInt(out, 10, 64)
				if !ok || err != nil {
					b.Fatalf("%s: %q", loop, out)
				}
				total += time.Duration(ns)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*n), unit)
		})
	}
}

func TestExplainSocketRefusals(t *testing.T) {
	t.Parallel()
	root, outside := realDir(t), realDir(t)
	daemon := listen(t, filepath.Join(outside, "docker.sock"))
	on := &Policy{Mode: WorkspaceWrite, Root: root, Network: true}
	off := &Policy{Mode: WorkspaceWrite, Root: root, Network: false}
	const want = "connecting to Unix sockets outside the project is not allowed"
	for _, tc := range []struct {
		p      *Policy
		output string
		note   bool
	}{
		{on, "permission denied while trying to connect to the Docker daemon socket at unix://" + daemon.path + ": Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json\": dial unix " + daemon.path + ": connect: permission denied", true},
		{on, "Error connecting to agent: Permission denied", true},
		{on, "error connecting to /tmp/tmux-1000/default (Permission denied)", true},
		{on, "2024/01/01 socat[1] E connect(5, AF=1 \"" + daemon.path + "\", 110): Permission denied", true},
		{off, "bash: " + daemon.path + ": Permission denied", true}, // a socket file outside the project, named
		{off, "bash: connect: Permission denied", false},            // TCP without the network: not a socket
		{on, "touch: cannot touch '/etc/x': Permission denied", false},
		{on, "all good", false},
	} {
		got := tc.p.Explain(tc.output)
		if strings.Contains(got, want) != tc.note {
			t.Errorf("%q: note %q", tc.output, got)
		}
		if tc.note && (!strings.Contains(got, "sandbox_unix_sockets in their user config") || strings.Contains(got, "writes outside")) {
			t.Errorf("%q: the note %q does not say how to allow a socket, or blames a write", tc.output, got)
		}
	}
}

// TestRefusedConnectsAreToldEvenWhenTheOutputNamesNoSocket: python's
// PermissionError and curl's "Couldn't connect to server" name no socket;
// the sandbox's own record of the refusal does.
func TestRefusedConnectsAreToldEvenWhenTheOutputNamesNoSocket(t *testing.T) {
	t.Parallel()
	supervised(t)
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	daemon := listen(t, filepath.Join(f.outside, "daemon.sock"))
	if out, ok := probe(t, p, "connect", "PROBE_ADDR="+daemon.path); ok {
		t.Fatalf("connect: %q", out)
	}
	note := p.Explain("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nPermissionError: [Errno 13] Permission denied")
	if !strings.Contains(note, "connecting to Unix sockets outside the project is not allowed (refused: "+daemon.path+")") || strings.Contains(note, "writes outside") {
		t.Errorf("note %q", note)
	}
	// Told once: the next command's note is its own.
	if note := p.Explain("PermissionError: [Errno 13] Permission denied"); note != "" {
		t.Errorf("the refusal was told again: %q", note)
	}
}

// tcpListener is a listener on 127.0.0.1 that counts the connections it
// accepts and closes them; it is closed when the test ends.
func tcpListener(t *testing.T) (net.Listener, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln, accepted
}
