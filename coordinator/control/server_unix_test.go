//go:build unix

package control

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAnotherUserIsRefused runs a client as nobody (when the tests run as
// root): the socket's mode keeps it out, and where the mode would let it
// in, the server's check of its peer refuses it.
func TestAnotherUserIsRefused(t *testing.T) {
	if os.Getenv("RALPH_CONTROL_CLIENT") != "" {
		t.Skip("the client side runs in TestControlClientHelper")
	}
	if os.Geteuid() != 0 {
		t.Skip("switching to another user needs root")
	}
	dir, err := os.MkdirTemp("", "ralph-control-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root := project(t, dir)
	// The test binary lives where only its owner may look; nobody runs a
	// copy.
	bin := filepath.Join(dir, "control.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Both users are pointed at one state directory, so the client finds
	// the server's socket at all (each user's is their own otherwise).
	base, err := os.MkdirTemp("", "ralph-control-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(base, "state")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("RALPH_HOME", state)
	srv, target, _ := startServer(t, root)
	client := func() string {
		cmd := exec.Command(bin, "-test.run=^TestControlClientHelper$", "-test.count=1", "-test.v")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "RALPH_CONTROL_CLIENT="+root, "HOME="+dir, "RALPH_HOME="+state)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return fmt.Sprintf("%s(%v)", out, err)
	}
	if out := client(); !strings.Contains(out, "refused:") {
		t.Fatalf("nobody through the owner-only socket:\n%s", out)
	}
	// Were the modes wrong, the peer check still refuses.
	for _, p := range []string{srv.Path(), filepath.Dir(srv.Path()), state} {
		mode := os.FileMode(0o755)
		if p == srv.Path() {
			mode = 0o666
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	// The client refuses first now: the server is not of its user.
	if out := client(); !strings.Contains(out, "refused: "+ErrRefused.Error()) && !strings.Contains(out, ErrImpostor.Error()) || strings.Contains(out, "not yours") {
		t.Fatalf("nobody through a socket open to all:\n%s", out)
	}
	if len(target.calls()) != 0 {
		t.Fatalf("another user's request arrived: %q", target.calls())
	}
}
