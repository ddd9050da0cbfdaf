//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeKeyring tries the kernel keyring's three system calls and looks
// for PROBE_KEY's description in /proc/keys, which lists a key whose
// permissions grant only its possessor the right to see it only to a
// process that possesses it. It prints "name=result" for each.
func probeKeyring() int {
	var out []string
	errName := func(errno unix.Errno) string {
		if errno == 0 {
			return "ok"
		}
		return errnoName(errno)
	}
	session, user := unix.KEY_SPEC_SESSION_KEYRING, unix.KEY_SPEC_USER_KEYRING
	_, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(session), 0)
	out = append(out, "keyctl="+errName(e))
	typ, desc, payload := []byte("user\x00"), []byte("ralph-probe-planted\x00"), []byte("x")
	_, _, e = unix.Syscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])),
		uintptr(unsafe.Pointer(&payload[0])), 1, uintptr(user), 0)
	out = append(out, "add_key="+errName(e))
	_, _, e = unix.Syscall6(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])), 0, 0, 0, 0)
	out = append(out, "request_key="+errName(e))
	runtime.KeepAlive(typ)
	runtime.KeepAlive(desc)
	runtime.KeepAlive(payload)
	keys, err := os.ReadFile("/proc/keys")
	if err != nil {
		out = append(out, "proc-keys="+err.Error())
	} else {
		out = append(out, fmt.Sprintf("possessed=%v", strings.Contains(string(keys), os.Getenv("PROBE_KEY"))))
	}
	fmt.Println(strings.Join(out, " "))
	return 0
}

// keyPosAll is KEY_POS_ALL (linux/keyctl.h), which x/sys/unix does not
// define: every right for the key's possessor, none for anyone else.
const keyPosAll = 0x3f000000

// TestKeyringOutOfReach: the test's thread joins a session keyring of its
// own holding a key that only its possessor may see, and starts the
// sandbox's helper from that thread, as ralph started inside the
// person's session keyring does. In every sandbox the command possesses
// nothing of it (its session keyring is a fresh one) and add_key,
// request_key and keyctl fail with EPERM.
func TestKeyringOutOfReach(t *testing.T) {
	if !filterSupported() {
		t.Skip("no socket filter on this architecture")
	}
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprintf("fallback=%v", fallback), func(t *testing.T) {
			if fallback {
				t.Setenv(NoUserNamespacesEnv, "1")
			}
			// Keyrings are per thread: this goroutine keeps its thread,
			// which ends with it, so nothing else runs with its keyring.
			runtime.LockOSThread()
			if _, err := unix.KeyctlJoinSessionKeyring("ralph-sandbox-test"); err != nil {
				t.Skipf("no keyrings here: %v", err)
			}
			desc := fmt.Sprintf("ralph-sandbox-secret-%d", os.Getpid())
			id, err := unix.AddKey("user", desc, []byte("the person's secret"), unix.KEY_SPEC_SESSION_KEYRING)
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.KeyctlSetperm(id, keyPosAll); err != nil {
				t.Fatal(err)
			}
			if keys, _ := os.ReadFile("/proc/keys"); !strings.Contains(string(keys), desc) {
				t.Fatalf("the test's own thread does not see its key, so the test proves nothing:\n%s", keys)
			}
			p, err := New(WorkspaceWrite, realDir(t), true)
			if err != nil {
				t.Fatal(err)
			}
			out, ok := probe(t, p, "keyring", "PROBE_KEY="+desc)
			if !ok {
				t.Fatalf("probe: %s", out)
			}
			want := "keyctl=EPERM add_key=EPERM request_key=EPERM possessed=false"
			if out != want {
				t.Fatalf("the command reached the keyring: %s, want %s", out, want)
			}
		})
	}
}

// probeFamilies tries a socket of every address family the kernel may
// know and prints "family=errno" for each one that fails with
// EAFNOSUPPORT, the filter's answer to a family outside socketFamilies.
func probeFamilies() int {
	var out []string
	for f := 1; f < unix.AF_MAX; f++ {
		for _, typ := range []int{unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_RAW, unix.SOCK_SEQPACKET} {
			fd, err := unix.Socket(f, typ|unix.SOCK_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
			if err != unix.EAFNOSUPPORT {
				out = append(out, fmt.Sprintf("%d/%d=%s", f, typ, errnoName(err)))
			}
		}
		if _, err := unix.Socketpair(f, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != unix.EAFNOSUPPORT && !allowedFamily(f) {
			out = append(out, fmt.Sprintf("pair/%d=%s", f, errnoName(err)))
		}
	}
	fmt.Println(strings.Join(out, " "))
	return 0
}

// errnoName is "ok" for no error, else the errno's name.
func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	if errno, ok := err.(unix.Errno); ok {
		return unix.ErrnoName(errno)
	}
	return strings.ReplaceAll(err.Error(), " ", "_")
}

func allowedFamily(f int) bool {
	for _, a := range socketFamilies {
		if int(a.family) == f {
			return true
		}
	}
	return false
}

// TestSocketFamiliesAreOneList: the families a command may make sockets
// of are socketFamilies, the same in the default sandbox and the
// fallback, with the network on and off. Every other family (vsock,
// packet, AF_ALG, SMC, Bluetooth, PF_KEY, …) fails with EAFNOSUPPORT, a
// socket pair of one too; vsock is tried outside the sandbox first, so a
// kernel without it does not pass the test unawares.
func TestSocketFamiliesAreOneList(t *testing.T) {
	if !filterSupported() {
		t.Skip("no socket filter on this architecture")
	}
	if fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
		unix.Close(fd)
	} else {
		t.Logf("no vsock outside the sandbox either (%v): the test shows less here", err)
	}
	for _, c := range []struct{ fallback, network bool }{{false, true}, {false, false}, {true, true}, {true, false}} {
		t.Run(fmt.Sprintf("fallback=%v,network=%v", c.fallback, c.network), func(t *testing.T) {
			if c.fallback {
				t.Setenv(NoUserNamespacesEnv, "1")
			}
			p, err := New(WorkspaceWrite, realDir(t), c.network)
			if err != nil {
				t.Fatal(err)
			}
			out, ok := probe(t, p, "families")
			if !ok {
				t.Fatalf("probe: %s", out)
			}
			for _, f := range strings.Fields(out) {
				if strings.HasPrefix(f, "pair/") {
					t.Errorf("a socket pair outside the list: %s", f)
					continue
				}
				var fam, typ int
				if _, err := fmt.Sscanf(f, "%d/%d=", &fam, &typ); err != nil || !allowedFamily(fam) {
					t.Errorf("a family outside the list: %s (all: %s)", f, out)
				}
			}
			for _, f := range socketFamilies {
				if !strings.Contains(" "+out, fmt.Sprintf(" %d/", f.family)) {
					t.Errorf("family %d is on the list but no socket of it could be made: %s", f.family, out)
				}
			}
		})
	}
}

// TestFilterAssemblesForEveryRuleSet: classic BPF jumps reach at most 255
// instructions forward, and the keyring's and the families' rules made the
// program longer; every combination of rules must still assemble, also
// those this kernel does not use (supervising only before Landlock ABI 9).
func TestFilterAssemblesForEveryRuleSet(t *testing.T) {
	for _, r := range []filterRules{{}, {supervise: true}, {noNetwork: true}, {supervise: true, noNetwork: true}} {
		if _, err := connectFilter(r); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
}
