package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestAStoppedHelperIsToldFromASlowOne: a helper that has not answered
// is replaced only when it is stopped (a command's SIGSTOP) or gone; one
// that runs, however slowly on a loaded machine, is waited for. Waiting
// 5 s and calling any silence a stop failed a loaded make check
// (TestRunCommandSandboxRefusesAndSaysSo: "the sandbox helper was
// stopped").
func TestAStoppedHelperIsToldFromASlowOne(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	s := &server{cmd: cmd}
	if !s.running() {
		t.Fatal("a sleeping helper was taken for a stopped one")
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.running() {
		if time.Now().After(deadline) {
			t.Fatal("a helper stopped with SIGSTOP was taken for a running one")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for !s.running() {
		if time.Now().After(deadline) {
			t.Fatal("a helper continued (SIGCONT) was still taken for a stopped one")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if s.running() {
		t.Fatal("a helper that is gone was taken for a running one")
	}
}
