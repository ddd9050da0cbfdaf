//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// probeSockets tries each kind of socket the socket filter judges and
// prints one "name=result" a kind, the result "ok" or the errno's name.
func probeSockets() int {
	var out []string
	try := func(name string, err error) {
		r := "ok"
		if errno, ok := err.(unix.Errno); ok {
			r = unix.ErrnoName(errno)
		} else if err != nil {
			r = err.Error()
		}
		out = append(out, name+"="+r)
	}
	sock := func(domain, typ, proto int) error {
		fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	try("unix-dgram", sock(unix.AF_UNIX, unix.SOCK_DGRAM, 0))
	_, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	try("unix-dgram-pair", err)
	try("unix-raw", sock(unix.AF_UNIX, unix.SOCK_RAW, 0))
	try("unix-stream", sock(unix.AF_UNIX, unix.SOCK_STREAM, 0))
	try("unix-seqpacket", sock(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0))
	try("tcp", sock(unix.AF_INET, unix.SOCK_STREAM, 0))
	try("tcp6", sock(unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP))
	try("mptcp", sock(unix.AF_INET, unix.SOCK_STREAM, ipprotoMPTCP))
	try("udp", sock(unix.AF_INET, unix.SOCK_DGRAM, 0))
	try("sctp", sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP))
	try("packet", sock(unix.AF_PACKET, unix.SOCK_DGRAM, 0))
	try("netlink", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE))
	fd, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	try("fastopen", unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}}))
	fmt.Println(strings.Join(out, " "))
	return 0
}

// TestSocketFilter: in every sandbox an MPTCP socket is refused, as are
// Unix datagram sockets where Landlock cannot judge their sends (before
// ABI 9); a packet socket, of a family outside socketFamilies, is refused
// everywhere (TestSocketFamiliesAreOneList tries them all); without the
// network and without a network namespace only TCP, Unix and netlink
// sockets can be made, and a TCP fast open send is refused. Everything
// else stays as the kernel has it.
func TestSocketFilter(t *testing.T) {
	if !filterSupported() {
		t.Skip("no socket filter on this architecture")
	}
	dgram := "EACCES"
	if landlockABI() >= landlockResolveUnix {
		dgram = "ok"
	}
	for _, c := range []struct {
		fallback, network bool
		want              map[string]string
	}{
		{false, true, map[string]string{"mptcp": "EPROTONOSUPPORT", "udp": "ok", "tcp": "ok", "sctp": "", "packet": "EAFNOSUPPORT", "fastopen": ""}},
		{false, false, map[string]string{"mptcp": "EPROTONOSUPPORT", "udp": "ok", "tcp": "ok", "packet": "EAFNOSUPPORT", "fastopen": "ECONNREFUSED"}},
		{true, true, map[string]string{"mptcp": "EPROTONOSUPPORT", "udp": "ok", "tcp": "ok", "packet": "EAFNOSUPPORT", "fastopen": ""}},
		{true, false, map[string]string{"mptcp": "EPROTONOSUPPORT", "udp": "EACCES", "tcp": "ok", "tcp6": "ok", "sctp": "EACCES",
			"packet": "EAFNOSUPPORT", "netlink": "ok", "fastopen": "EACCES"}},
	} {
		t.Run(fmt.Sprintf("fallback=%v,network=%v", c.fallback, c.network), func(t *testing.T) {
			if c.fallback {
				t.Setenv(NoUserNamespacesEnv, "1")
			}
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(WorkspaceWrite, root, c.network)
			if err != nil {
				t.Fatal(err)
			}
			out, ok := probe(t, p, "sockets")
			if !ok {
				t.Fatalf("probe: %s", out)
			}
			t.Log(out)
			got := map[string]string{}
			for _, f := range strings.Fields(out) {
				k, v, _ := strings.Cut(f, "=")
				got[k] = v
			}
			want := map[string]string{"unix-dgram": dgram, "unix-dgram-pair": dgram, "unix-raw": dgram, "unix-stream": "ok", "unix-seqpacket": "ok"}
			for k, v := range c.want {
				want[k] = v
			}
			for k, v := range want {
				if v != "" && got[k] != v {
					t.Errorf("%s: %s, want %s (all: %s)", k, got[k], v, out)
				}
			}
			if c.fallback != (os.Getenv(NoUserNamespacesEnv) != "") {
				t.Fatal("the environment changed under the test")
			}
		})
	}
}

// probeSendLoop times PROBE_N sends of a small datagram to a UDP socket
// on the loopback, alternately with sendto and an address and with
// sendmsg and one, the calls a datagram program makes, and prints the
// nanoseconds they took.
func probeSendLoop() int {
	n, _ := strconv.Atoi(os.Getenv("PROBE_N"))
	r, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if err := unix.Bind(r, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	unix.SetsockoptInt(r, unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20)
	to, _ := unix.Getsockname(r)
	s, _ := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	msg, buf := []byte("x"), make([]byte, 16)
	start := time.Now()
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			err = unix.Sendto(s, msg, 0, to)
		} else {
			err = unix.Sendmsg(s, msg, nil, to, 0)
		}
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		unix.Recvfrom(r, buf, 0)
	}
	fmt.Println(time.Since(start).Nanoseconds())
	return 0
}

// BenchmarkSandboxedSends times a loop of 10,000 UDP sends (sendto and
// sendmsg with an address, each received) inside one sandboxed command,
// with the connect filter and without it: the socket filter must cost
// ordinary sends nothing noticeable.
func BenchmarkSandboxedSends(b *testing.B) { benchProbeLoop(b, "send-loop", 10000, "ns/send") }
