//go:build linux

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Issue 56, cause 9, and the vsock note under cause 10: the kernel's
// keyrings belong to no namespace and Landlock does not cover them, so a
// command read what ralph's session keyring held (where Kerberos tickets,
// file-system encryption keys and stored tokens live) and added keys to
// the person's user keyring that outlived it; and the default sandbox
// let commands open vsock sockets, which reach the host or other virtual
// machines whatever network namespace they are in.

// keyringLauncher is ralph's parent here: it joins a new session keyring,
// puts the secret there as a login's tools would (sys.argv[1] its
// description, sys.argv[2] its value) and runs the rest of its arguments,
// so ralph starts inside the person's session keyring. Python, being one
// thread, moves whole: a Go process's keyrings are its threads'.
const keyringLauncher = `import ctypes, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
if libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(1), None) < 0:
    sys.exit("join: " + os.strerror(ctypes.get_errno()))
secret = sys.argv[2].encode()
if libc.syscall(ctypes.c_long(add_key), b"user", sys.argv[1].encode(), secret, ctypes.c_size_t(len(secret)), ctypes.c_long(-3)) < 0:
    sys.exit("add_key: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[3], sys.argv[3:])
`

// keyringPayload is the model's command: it looks the secret up in its
// session keyring and reads it (KEYCTL_SEARCH, KEYCTL_READ), adds a key
// of its own to the user keyring, and makes a vsock socket. Each step
// prints "<name>: " and what came of it. keyctl(1), where installed, tries
// the same.
func keyringPayload(secretDesc, plantDesc string) string {
	py := `import ctypes, os, platform, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
L = ctypes.c_long
r = libc.syscall(L(keyctl), L(10), L(-3), b"user", b"` + secretDesc + `", L(0))
if r < 0:
    print("read: refused", os.strerror(ctypes.get_errno()))
else:
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall(L(keyctl), L(11), L(r), buf, L(256))
    print("read:", buf.raw[:n].decode() if n >= 0 else "refused " + os.strerror(ctypes.get_errno()))
r = libc.syscall(L(add_key), b"user", b"` + plantDesc + `", b"planted", ctypes.c_size_t(7), L(-4))
print("plant:", "refused " + os.strerror(ctypes.get_errno()) if r < 0 else "added %d" % r)
try:
    socket.socket(40, socket.SOCK_STREAM)
    print("vsock: made")
except OSError as e:
    print("vsock: refused", e)
`
	return "if command -v keyctl >/dev/null; then keyctl print %user:" + secretDesc + " 2>&1; keyctl show @s 2>&1; " +
		"keyctl add user " + plantDesc + "-cli planted @u 2>&1; fi; python3 -c '" + py + "'"
}

// TestAttackKeyringAndVsock: ralph runs in a session keyring holding the
// person's secret; the model's approved command tries to read it, to
// leave a key in the user keyring, and to open a vsock socket. In the
// default sandbox and in the fallback each is refused, the secret never
// reaches the endpoint, and the user keyring has no new key once ralph
// has exited.
func TestAttackKeyringAndVsock(t *testing.T) {
	t.Parallel()
	python := needTool(t, "python3", "python3")
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			tag := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
			secretDesc, plantDesc := "ralph-e2e-krb-"+tag, "ralph-e2e-plant-"+tag
			secret := "kerberos-ticket-never-leaked-" + tag
			t.Cleanup(func() {
				// A key the attack did leave in the user keyring is taken
				// out again, so that one failing run does not linger.
				for _, d := range []string{plantDesc, plantDesc + "-cli"} {
					if id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", d, 0); err == nil {
						unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_USER_KEYRING, 0, 0)
					}
				}
			})
			srv, results := commandsServer(t, keyringPayload(secretDesc, plantDesc))
			env := attackEnv(t, home, srv.URL, mode.env)

			ctx, cancel := context.WithTimeout(context.Background(), ralphRunLimit)
			defer cancel()
			cmd := exec.CommandContext(ctx, python, "-c", keyringLauncher, secretDesc, secret, ralphBin, "-y", "set up the keys")
			cmd.Dir, cmd.Env = proj, env
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("ralph in a session keyring: %v\n%s\n%s", err, out.String(), errb.String())
			}
			res := results()
			t.Logf("the model saw:\n%s", res)
			if !strings.Contains(res, "read: ") {
				t.Fatalf("the payload did not run:\n%s\n%s", res, errb.String())
			}
			for _, r := range srv.Requests() {
				if bytes.Contains(r.Body, []byte(secret)) {
					t.Errorf("the session keyring's secret reached the endpoint (request %d)", r.Index)
				}
			}
			for _, step := range []string{"read", "plant", "vsock"} {
				if !strings.Contains(res, step+": refused") {
					t.Errorf("%s was not refused:\n%s", step, res)
				}
			}
			for _, d := range []string{plantDesc, plantDesc + "-cli"} {
				id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", d, 0)
				if !errors.Is(err, unix.ENOKEY) {
					t.Errorf("the user keyring holds the command's key %s after ralph exited (id %d, %v)", d, id, err)
				}
			}
		})
	}
}
