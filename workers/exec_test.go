package workers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// newTestWorkspace returns a Workspace rooted in a fresh temporary
// directory.
func newTestWorkspace(t testing.TB, opts Options) *Workspace {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	w, err := NewWorkspace(opts)
	if err != nil {
		t.Fatalf("NewWorkspace: %v", err)
	}
	t.Cleanup(w.Close)
	return w
}

// gitWorkspace is a Workspace whose root holds a git repository and
// ralph's state, as a real project does.
func gitWorkspace(t testing.TB, opts Options) *Workspace {
	t.Helper()
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(root, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".ralph", "session.lock"), []byte("lock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Root = root
	return newTestWorkspace(t, opts)
}

// mustFail fails the test unless res is an error containing want.
func mustFail(t testing.TB, res Result, want string) {
	t.Helper()
	if !res.IsError || !strings.Contains(res.Output, want) {
		t.Fatalf("result %+v, want an error containing %q", res, want)
	}
}

// waitForPID polls for a file holding a pid written by a test command.
func waitForPID(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no pid appeared in %s", path)
	return 0
}

// assertGroupGone checks the hard requirement that nothing of a command's
// process group runs after Exec returns. Right away no member may be
// alive; zombies may remain until init reaps them (some container inits
// only do that every couple of seconds), after which kill(-pgid, 0)
// reports ESRCH.
func assertGroupGone(t testing.TB, pgid int) {
	t.Helper()
	assertNoLiveMember(t, pgid)
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := signalGroup(pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still exists (kill -0: %v)", pgid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupToFile writes the command's process group id, as the machine sees
// it, to the file pid: /proc/self/stat's fifth field. $$ would not do:
// a sandboxed shell has a pid of its own namespace's, not the group's.
const groupToFile = "read -r _ _ _ _ g _ < /proc/self/stat; echo $g > pid"

func TestExecTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	w := newTestWorkspace(t, Options{})
	start := time.Now()
	res := w.Exec(context.Background(), groupToFile+"; echo started; sleep 60 & sleep 60", 500*time.Millisecond, true)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	mustFail(t, res, "command timed out after 500ms; its process group was killed")
	mustFail(t, res, "started")
	assertGroupGone(t, waitForPID(t, filepath.Join(w.Root(), "pid")))
}

func TestExecCancelKillsGroupPromptly(t *testing.T) {
	t.Parallel()
	cancelKillsGroupWithin(t, newTestWorkspace(t, Options{}), 200*time.Millisecond)
}

// TestExecSandboxedHardStop cancels a sandboxed command running in
// every namespace the sandbox uses: it must end within 100 ms of the
// cancel and leave no process behind.
func TestExecSandboxedHardStop(t *testing.T) {
	t.Parallel()
	cancelKillsGroupWithin(t, gitWorkspace(t, Options{NoNetwork: true}), 100*time.Millisecond)
}

// cancelKillsGroupWithin cancels a command whose shell has a background
// child: Exec must return within limit of the cancel, report the kill,
// and leave nothing of the process group behind.
func cancelKillsGroupWithin(t *testing.T, w *Workspace, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- w.Exec(ctx, "sleep 60 & "+groupToFile+"; sleep 60", time.Minute, true)
	}()
	pgid := waitForPID(t, filepath.Join(w.Root(), "pid"))
	cancelled := time.Now()
	cancel()
	var res Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Exec did not return after cancel")
	}
	d := time.Since(cancelled)
	t.Logf("Exec returned %v after cancel", d)
	if d > limit {
		t.Errorf("Exec returned %v after cancel, want < %v", d, limit)
	}
	mustFail(t, res, "command cancelled; its process group was killed")
	assertGroupGone(t, pgid)
}

func TestExecBackgroundChildDoesNotHang(t *testing.T) {
	t.Parallel()
	w := newTestWorkspace(t, Options{})
	start := time.Now()
	// The first job keeps the output pipe open; the second does not hold it
	// but must still be killed with the group.
	res := w.Exec(context.Background(), groupToFile+"; sleep 100 & (sleep 100 >/dev/null 2>&1 &); echo done", time.Minute, true)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("call took %v with a background child", d)
	}
	if res.IsError || res.Output != "done\n" {
		t.Fatalf("result %+v", res)
	}
	assertGroupGone(t, waitForPID(t, filepath.Join(w.Root(), "pid")))
}

// TestExecTimeoutKillsWhatLeftTheGroup: outside the sandbox, a command
// that ralph stops has the processes it moved out of its group (setsid)
// killed too, found by the mark in their environment.
func TestExecTimeoutKillsWhatLeftTheGroup(t *testing.T) {
	t.Parallel()
	w := newTestWorkspace(t, Options{Sandbox: sandbox.FullAccess})
	token := fmt.Sprintf("left-the-group-%d", time.Now().UnixNano())
	res := w.Exec(context.Background(), "setsid sh -c 'sleep 300; : "+token+"' > /dev/null 2>&1 < /dev/null & sleep 60", 500*time.Millisecond, true)
	mustFail(t, res, "command timed out")
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), token) {
			t.Errorf("%s outlived the command that ralph stopped: %q", p, b)
		}
	}
}
