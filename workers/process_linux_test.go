package workers

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGroupStopKillsTheWholeGroup: a program and the child it left in its
// group are both gone after Stop, and a leader that exited by itself is
// reported with its status.
func TestGroupStopKillsTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	g, err := StartGroup(exec.Command("sh", "-c", "sleep 60 & echo $! > "+pidFile+"; exec sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(5 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("the child never started")
	}
	how := g.Stop(time.Second)
	if !strings.Contains(how, "signal terminated") {
		t.Errorf("Stop = %q, want the leader ended by SIGTERM", how)
	}
	// Zombies waiting for init to reap them run no code; they count as gone.
	if groupHasLiveMember(g.Pid()) {
		t.Fatal("the group still has live members")
	}
	if err := syscall.Kill(child, 0); !errors.Is(err, syscall.ESRCH) {
		if data, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat"); !strings.Contains(string(data), ") Z ") {
			t.Fatalf("the child %d is alive: %s", child, data)
		}
	}
	if again := g.Stop(0); again != how {
		t.Errorf("a second Stop = %q", again)
	}

	g, err = StartGroup(exec.Command("sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("Exited never closed")
	}
	if how := g.Stop(0); how != "exited with status 3" {
		t.Errorf("Stop = %q", how)
	}
}
