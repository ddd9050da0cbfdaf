package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The seccomp filter that hands every connect(2) of a sandboxed command
// to ralph. Landlock before ABI 9 cannot refuse a connect to a named Unix
// socket, and a network namespace does not separate them either, so on
// such kernels ralph looks at each connect itself (connectSupervisor)
// and performs it, or refuses it, on the command's behalf.

// seccomp's user-notification structures (linux/seccomp.h); their sizes
// are part of the ioctl numbers.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// seccompIoctlNotifIDValid is SECCOMP_IOCTL_NOTIF_ID_VALID, _IOW('!', 2,
// __u64), which x/sys/unix does not define.
const seccompIoctlNotifIDValid = 0x40082102

// SECCOMP_IOCTL_NOTIF_SET_FLAGS, _IOW('!', 4, __u64), and its one flag.
const (
	seccompIoctlNotifSetFlags    = 0x40082104
	seccompUserNotifFDSyncWakeUp = 1
)

// The offsets of struct seccomp_data's fields, for the filter's loads.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// x32 system calls are x86-64 ones with this bit set.
const x32SyscallBit = 0x40000000

// socketcall's call numbers (linux/net.h).
const (
	sysSocket     = 1
	sysConnect    = 3
	sysSocketpair = 8
	sysSendto     = 11
	sysSendmsg    = 16
	sysSendmmsg   = 20
)

// ipprotoMPTCP is IPPROTO_MPTCP, which x/sys/unix does not define.
const ipprotoMPTCP = 262

// sockTypeMask is SOCK_TYPE_MASK: the type argument of socket(2) without
// SOCK_CLOEXEC and SOCK_NONBLOCK.
const sockTypeMask = 0xf

// archCalls are the numbers the filter acts on, per audit architecture.
// All four architectures a helper on x86-64 or arm64 can meet are listed:
// a 64-bit command may still make 32-bit system calls (int 0x80 on
// x86-64, an arm32 binary on arm64), and a filter that let those through
// would let connect through with them.
type archCalls struct {
	arch         uint32
	mask         uint32 // ANDed with the number first; 0 for none
	connect      uint32
	socketcall   uint32 // 0 where there is none
	ioUringSetup uint32
	seccomp      uint32
	socket       uint32
	socketpair   uint32
	sendto       uint32
	sendmsg      uint32
	sendmmsg     uint32
	// The kernel keyring's calls.
	addKey, requestKey, keyctl uint32
	// x32 has numbers of its own for the calls that take a msghdr.
	sendmsgX32, sendmmsgX32 uint32
}

var filterArchs = []archCalls{
	{arch: unix.AUDIT_ARCH_X86_64, mask: ^uint32(x32SyscallBit), connect: 42, ioUringSetup: 425, seccomp: 317,
		socket: 41, socketpair: 53, sendto: 44, sendmsg: 46, sendmmsg: 307, sendmsgX32: 518, sendmmsgX32: 538,
		addKey: 248, requestKey: 249, keyctl: 250},
	{arch: unix.AUDIT_ARCH_I386, connect: 362, socketcall: 102, ioUringSetup: 425, seccomp: 354,
		socket: 359, socketpair: 360, sendto: 369, sendmsg: 370, sendmmsg: 345,
		addKey: 286, requestKey: 287, keyctl: 288},
	{arch: unix.AUDIT_ARCH_AARCH64, connect: 203, ioUringSetup: 425, seccomp: 277,
		socket: 198, socketpair: 199, sendto: 206, sendmsg: 211, sendmmsg: 269,
		addKey: 217, requestKey: 218, keyctl: 219},
	{arch: unix.AUDIT_ARCH_ARM, connect: 283, socketcall: 102, ioUringSetup: 425, seccomp: 383,
		socket: 281, socketpair: 288, sendto: 290, sendmsg: 296, sendmmsg: 374,
		addKey: 309, requestKey: 310, keyctl: 311},
}

// socketFamilies is the one allow-list of address families a sandboxed
// command may make sockets of, the same in the default sandbox and in the
// Landlock-only fallback, with the network on or off; each family goes on
// to the rules named beside it. Every other family fails with
// EAFNOSUPPORT, as on a kernel built without it: vsock (which no network
// namespace separates, and which reaches the host or other virtual
// machines), packet and raw link-layer sockets, AF_ALG (the kernel's
// crypto API, a large attack surface), SMC (TCP by another door, which
// Landlock's TCP rules do not govern), Bluetooth, CAN, TIPC, RDS, XDP,
// PF_KEY and the rest. Netlink stays: glibc's getaddrinfo and
// getifaddrs, Go's and Node's interface listings, ip and ss all read the
// routing tables through it, and a command without capabilities can
// change nothing there.
var socketFamilies = []struct {
	family uint32
	rules  string // the filter's label for its sockets' further rules
}{
	{unix.AF_UNIX, "socket-unix"},
	{unix.AF_INET, "socket-inet"},
	{unix.AF_INET6, "socket-inet"},
	{unix.AF_NETLINK, "allow"},
}

// filterSupported reports whether this build knows the system call
// numbers of the architecture it runs on.
func filterSupported() bool {
	switch runtime.GOARCH {
	case "amd64", "arm64", "386", "arm":
		return true
	}
	return false
}

// filterRules says which parts of the filter a helper needs.
type filterRules struct {
	// supervise hands connects to ralph (Landlock before ABI 9 cannot
	// refuse named Unix sockets) and refuses Unix datagram sockets,
	// whose sendto and sendmsg can name any socket without a connect.
	supervise bool
	// noNetwork is the sandbox without the network and without a
	// network namespace: Landlock's rules govern TCP only, so every other
	// way onto a network is refused here.
	noNetwork bool
}

// connectFilter is the BPF program: for each known architecture,
//
//   - connect (and socketcall's connect) goes to the supervisor, when
//     supervising;
//   - socket(2) and socketpair(2) make sockets only of the families in
//     socketFamilies; any other family fails with EAFNOSUPPORT;
//   - socket(2) with IPPROTO_MPTCP fails with EPROTONOSUPPORT, as on a
//     kernel without MPTCP: Landlock's TCP rules do not govern it, and
//     programs (Go's listeners among them) fall back to TCP;
//   - when supervising, socket(2) and socketpair(2) of AF_UNIX make
//     only stream and seqpacket sockets, others (SOCK_DGRAM, and SOCK_RAW,
//     which the kernel makes a datagram socket of) fail with EACCES: such a socket's sendto and sendmsg
//     reach any named socket by its path, which seccomp cannot see (it is
//     in the command's memory) and which could be rewritten after ralph
//     looked. Stream and seqpacket sockets cannot address a send (the
//     kernel refuses or ignores the name), so connect is their only way;
//   - without the network and its namespace, IP sockets are TCP only
//     (UDP, raw, SCTP and the rest fail with EACCES), and sends with
//     MSG_FASTOPEN, a connect in disguise, fail with EACCES;
//   - socketcall's socket and socketpair (32-bit programs only), whose
//     arguments lie in memory, fail with ENOSYS, and without the network
//     its sends too;
//   - add_key, request_key and keyctl fail with EPERM: the kernel's
//     keyrings are no part of any namespace and Landlock does not cover
//     them, so a command could otherwise read what the person's session
//     keyring holds (Kerberos tickets, file-system encryption keys, stored
//     tokens) or leave keys in their user keyring that outlive it. The
//     helper gives commands a fresh session keyring besides (see
//     keyring_linux.go). EPERM is the answer Docker's default profile
//     gives these calls, so tools that run in containers already cope with
//     it ("Operation not permitted"); ENOSYS would claim a kernel built
//     without keyrings;
//   - io_uring_setup fails with ENOSYS, because a ring's IORING_OP_CONNECT
//     is a connect that no seccomp filter sees, and programs fall back
//     to plain system calls without io_uring;
//   - seccomp(SECCOMP_SET_MODE_FILTER) with SECCOMP_FILTER_FLAG_NEW_LISTENER
//     fails with EPERM: when two filters both ask for a user
//     notification, the newest one's listener gets it, so a command
//     could otherwise install its own listener in front of ralph's and
//     answer "continue" to its own connects;
//   - everything else is allowed.
//
// An architecture the filter does not know kills the process: it cannot
// occur on the architectures listed, and letting it through would let
// its connect through.
func connectFilter(r filterRules) ([]unix.SockFilter, error) {
	connect := "allow"
	if r.supervise {
		connect = "notify"
	}
	var a bpfAsm
	a.ld(offArch)
	for _, c := range filterArchs {
		a.jeq(c.arch, fmt.Sprintf("arch-%x", c.arch), "")
	}
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	for _, c := range filterArchs {
		a.archRules(c, r, connect)
	}
	a.socketRules(r)
	// MSG_FASTOPEN in the flags: sendmsg's third argument, sendto's and
	// sendmmsg's fourth.
	a.label("send-flags2")
	a.ld(offArgs + 16)
	a.jset(unix.MSG_FASTOPEN, "eacces", "allow")
	a.label("send-flags3")
	a.ld(offArgs + 24)
	a.jset(unix.MSG_FASTOPEN, "eacces", "allow")
	a.label("notify")
	a.ret(unix.SECCOMP_RET_USER_NOTIF)
	a.label("enosys")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	a.label("eperm")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	a.label("eacces")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	a.label("eprotonosupport")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT))
	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	return a.assemble()
}

// archRules are the filter's rules for one architecture's system calls
// (its label arch-N): connect goes to connect ("allow" or "notify"),
// socket and socketpair to the socket rules, key calls are refused, and
// a seccomp call may not add a listener of its own.
func (a *bpfAsm) archRules(c archCalls, r filterRules, connect string) {
	p := fmt.Sprintf("arch-%x", c.arch)
	a.label(p)
	a.ld(offNr)
	if c.mask != 0 {
		a.and(c.mask)
	}
	a.jeq(c.connect, connect, "")
	if c.socketcall != 0 {
		a.jeq(c.socketcall, p+"-socketcall", "")
	}
	// socketpair's first three arguments are socket's, and the
	// kernel refuses a pair of any family but AF_UNIX itself.
	a.jeq(c.socket, "socket", "")
	a.jeq(c.socketpair, "socket", "")
	a.jeq(c.addKey, "eperm", "")
	a.jeq(c.requestKey, "eperm", "")
	a.jeq(c.keyctl, "eperm", "")
	if r.noNetwork {
		a.jeq(c.sendto, "send-flags3", "")
		a.jeq(c.sendmsg, "send-flags2", "")
		a.jeq(c.sendmmsg, "send-flags3", "")
		if c.sendmsgX32 != 0 {
			a.jeq(c.sendmsgX32, "send-flags2", "")
			a.jeq(c.sendmmsgX32, "send-flags3", "")
		}
	}
	a.jeq(c.ioUringSetup, "enosys", "")
	a.jeq(c.seccomp, p+"-seccomp", "")
	a.ret(unix.SECCOMP_RET_ALLOW)
	if c.socketcall != 0 {
		a.label(p + "-socketcall")
		a.ld(offArgs) // the low half of args[0]: the call
		a.jeq(sysConnect, connect, "")
		a.jeq(sysSocket, "enosys", "")
		a.jeq(sysSocketpair, "enosys", "")
		if r.noNetwork {
			a.jeq(sysSendto, "enosys", "")
			a.jeq(sysSendmsg, "enosys", "")
			a.jeq(sysSendmmsg, "enosys", "")
		}
		a.ret(unix.SECCOMP_RET_ALLOW)
	}
	a.label(p + "-seccomp")
	a.ld(offArgs) // the operation
	a.jeq(unix.SECCOMP_SET_MODE_FILTER, "", "allow")
	a.ld(offArgs + 8) // the flags
	a.jset(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, "eperm", "allow")
}

// socketRules are the filter's rules for socket's arguments, which
// every architecture's socket and socketpair jump to.
func (a *bpfAsm) socketRules(r filterRules) {
	// socket(domain, type, protocol): the same rules on every
	// architecture, since only the arguments' low halves count.
	a.label("socket")
	a.ld(offArgs) // the domain
	for _, f := range socketFamilies {
		a.jeq(f.family, f.rules, "")
	}
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT))
	a.label("socket-inet")
	a.ld(offArgs + 16) // the protocol
	a.jeq(ipprotoMPTCP, "eprotonosupport", "")
	if r.noNetwork {
		a.jeq(0, "", "socket-tcp")
		a.ld(offArgs + 8) // the type
		a.and(sockTypeMask)
		a.jeq(unix.SOCK_STREAM, "allow", "eacces")
		a.label("socket-tcp")
		a.jeq(unix.IPPROTO_TCP, "", "eacces")
		a.ld(offArgs + 8)
		a.and(sockTypeMask)
		a.jeq(unix.SOCK_STREAM, "allow", "eacces")
	} else {
		a.ret(unix.SECCOMP_RET_ALLOW)
	}
	a.label("socket-unix")
	if r.supervise {
		// Only stream and seqpacket: the kernel makes a datagram socket
		// of SOCK_RAW too.
		a.ld(offArgs + 8) // the type
		a.and(sockTypeMask)
		a.jeq(unix.SOCK_STREAM, "allow", "")
		a.jeq(unix.SOCK_SEQPACKET, "allow", "eacces")
	} else {
		a.ret(unix.SECCOMP_RET_ALLOW)
	}
}

// installConnectFilter installs connectFilter on every thread of this
// process (TSYNC: the helper's Go runtime forks commands from any of
// them) and, when supervising, returns the listener on which ralph
// receives the notifications (-1 otherwise). no_new_privs, which an
// unprivileged filter needs, is set by Landlock already and set again
// here so the order cannot matter.
func installConnectFilter(r filterRules) (int, error) {
	prog, err := connectFilter(r)
	if err != nil {
		return -1, err
	}
	if err := ll.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
	if r.supervise {
		flags |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	for {
		fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(prog)
		// ESRCH: a thread was exiting as the filter was synchronised;
		// trying again finds it gone.
		if errno == unix.ESRCH || errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, fmt.Errorf("seccomp: %w", errno)
		}
		if !r.supervise {
			return -1, nil
		}
		return int(fd), nil
	}
}

// bpfAsm assembles a classic BPF program with named forward jumps.
type bpfAsm struct {
	prog   []unix.SockFilter
	labels map[string]int
	jumps  []bpfJump
}

type bpfJump struct {
	at     int
	tl, fl string // "" is the next instruction
}

func (a *bpfAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

func (a *bpfAsm) ld(off uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *bpfAsm) and(k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

func (a *bpfAsm) ret(k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

func (a *bpfAsm) jeq(k uint32, t, f string) { a.jump(unix.BPF_JEQ, k, t, f) }

func (a *bpfAsm) jset(k uint32, t, f string) { a.jump(unix.BPF_JSET, k, t, f) }

func (a *bpfAsm) jump(op uint16, k uint32, t, f string) {
	a.jumps = append(a.jumps, bpfJump{at: len(a.prog), tl: t, fl: f})
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

// assemble resolves the jumps; classic BPF jumps only forward, by at
// most 255 instructions.
func (a *bpfAsm) assemble() ([]unix.SockFilter, error) {
	offset := func(from int, name string) (uint8, error) {
		if name == "" {
			return 0, nil
		}
		to, ok := a.labels[name]
		if !ok {
			return 0, fmt.Errorf("bpf: no label %q", name)
		}
		d := to - from - 1
		if d < 0 || d > 255 {
			return 0, errors.New("bpf: jump out of range")
		}
		return uint8(d), nil
	}
	for _, j := range a.jumps {
		var err error
		if a.prog[j.at].Jt, err = offset(j.at, j.tl); err != nil {
			return nil, err
		}
		if a.prog[j.at].Jf, err = offset(j.at, j.fl); err != nil {
			return nil, err
		}
	}
	if len(a.prog) > unix.BPF_MAXINSNS {
		return nil, errors.New("bpf: program too long")
	}
	return a.prog, nil
}
