//go:build linux

package control

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestOwnChildIsRefused: a process the ralph started itself, as the
// model's commands are, cannot steer it, though it runs as its user.
func TestOwnChildIsRefused(t *testing.T) {
	if os.Getenv("RALPH_CONTROL_CLIENT") != "" {
		t.Skip("the client side runs in TestControlClientHelper")
	}
	root := project(t, t.TempDir())
	_, target, _ := startServer(t, root)
	cmd := exec.Command(os.Args[0], "-test.run=^TestControlClientHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "RALPH_CONTROL_CLIENT="+root)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), refusedChild) {
		t.Fatalf("a child of the server: %v\n%s", err, out)
	}
	if len(target.calls()) != 0 {
		t.Fatalf("its request arrived: %q", target.calls())
	}
}

func TestDescendant(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	if !descendant(child.Process.Pid, os.Getpid()) {
		t.Fatal("a child is not a descendant")
	}
	if descendant(os.Getpid(), child.Process.Pid) {
		t.Fatal("the parent is a descendant of its child")
	}
	if !descendant(1<<30, os.Getpid()) {
		t.Fatal("a process that cannot be looked at does not fail closed")
	}
}
