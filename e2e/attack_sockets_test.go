package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAttackSocketsDatagramsAndNetwork is issue 42's causes 5 and 8, as an
// attacker whose every command is approved (-y): a command sends
// datagrams to a named Unix datagram socket outside the project without
// connecting (sendto, sendmsg, sendto from one end of a socket pair and
// from a SOCK_RAW socket),
// and, without the network, opens an MPTCP connection and sends a UDP
// datagram to servers on the host's loopback. Each payload carries
// whether the model's key was in its environment. Nothing arrives, in
// the default sandbox and in the Landlock-only fallback, with the
// network on and off; the command's output says each was refused.
func TestAttackSocketsDatagramsAndNetwork(t *testing.T) {
	t.Parallel()
	needTool(t, "python3", "python3")
	for _, c := range []struct {
		name     string
		fallback bool
		args     []string
	}{
		{"default", false, nil},
		{"default-read-only-no-network", false, []string{"--sandbox", "read-only", "--no-network"}},
		{"fallback", true, nil},
		{"fallback-no-network", true, []string{"--no-network"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			noNet := len(c.args) > 0 && c.args[len(c.args)-1] == "--no-network"
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			proj, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
			for _, d := range []string{proj, outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			gitProject(t, proj)

			var mu sync.Mutex
			var got []string
			arrived := func(what string) {
				mu.Lock()
				got = append(got, what)
				mu.Unlock()
			}
			dgram := filepath.Join(outside, "daemon.dgram")
			ul, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgram, Net: "unixgram"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ul.Close() })
			go func() {
				buf := make([]byte, 4096)
				for {
					n, _, err := ul.ReadFrom(buf)
					if err != nil {
						return
					}
					arrived("unix datagram: " + string(buf[:n]))
				}
			}()
			tl, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tl.Close() })
			go func() {
				for {
					conn, err := tl.Accept()
					if err != nil {
						return
					}
					buf := make([]byte, 4096)
					n, _ := conn.Read(buf)
					arrived("tcp: " + string(buf[:n]))
					conn.Close()
				}
			}()
			udp, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { udp.Close() })
			go func() {
				buf := make([]byte, 4096)
				for {
					n, _, err := udp.ReadFrom(buf)
					if err != nil {
						return
					}
					arrived("udp: " + string(buf[:n]))
				}
			}()

			// Each attack prints "<name>: sent" or "<name>: refused <error>".
			py := func(name, body string) string {
				return `python3 -c 'import os, socket
p = ("key in environment: %s" % ("OPENAI_API_KEY" in os.environ)).encode()
try:
    ` + body + `
    print("` + name + `: sent")
except OSError as e:
    print("` + name + `: refused", e)'`
			}
			port := tl.Addr().(*net.TCPAddr).Port
			uport := udp.LocalAddr().(*net.UDPAddr).Port
			attacks := []string{
				py("sendto", `socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(p, "`+dgram+`")`),
				py("sendmsg", `socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendmsg([p], [], 0, "`+dgram+`")`),
				py("pair", `socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0].sendto(p, "`+dgram+`")`),
				// The kernel makes a datagram socket of AF_UNIX SOCK_RAW.
				py("raw", `socket.socket(socket.AF_UNIX, socket.SOCK_RAW).sendto(p, "`+dgram+`")`),
			}
			if noNet {
				attacks = append(attacks,
					py("mptcp", fmt.Sprintf(`s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(5); s.connect(("127.0.0.1", %d)); s.sendall(p)`, port)),
					py("udp", fmt.Sprintf(`socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(p, ("127.0.0.1", %d))`, uport)),
					py("fastopen", fmt.Sprintf(`socket.socket(socket.AF_INET, socket.SOCK_STREAM).sendto(p, 0x20000000, ("127.0.0.1", %d))`, port)),
				)
			}
			srv, results := commandsServer(t, strings.Join(attacks, "; ")+"; true")
			const key = "sk-e2e-sockets-key-never-leaked"
			env := cleanEnv(t, append([]string{"OPENAI_API_KEY=" + key, "OPENAI_BASE_URL=" + srv.URL}, gitEnv...)...)
			if c.fallback {
				env = append(env, "RALPH_SANDBOX_NO_USERNS=1")
			}
			r := ralph(t, proj, env, nil, append([]string{"-y"}, append(c.args, "set up the sockets")...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			res := results()
			t.Logf("the model saw:\n%s", res)
			mu.Lock()
			defer mu.Unlock()
			if len(got) > 0 {
				t.Errorf("reached outside the sandbox: %q", got)
			}
			// Without the network, the default sandbox's commands have a
			// loopback of their own, where UDP and TCP go nowhere else;
			// the fallback has none, and refuses them.
			names := []string{"sendto", "sendmsg", "pair", "raw"}
			if noNet {
				names = append(names, "mptcp")
			}
			if noNet && c.fallback {
				names = append(names, "udp", "fastopen")
			}
			for _, n := range names {
				if !strings.Contains(res, n+": refused") {
					t.Errorf("%s was not refused:\n%s", n, res)
				}
			}
		})
	}
}
