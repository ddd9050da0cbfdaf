package workers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// Far below the 60 s the commands would sleep, and far above the
	// half second a quiet machine takes: the whole suite on two busy
	// cores once took six.
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	mustFail(t, res, "command timed out after 500ms; its process group was killed")
	mustFail(t, res, "started")
	assertGroupGone(t, waitForPID(t, filepath.Join(w.Root(), "pid")))
}

// Cancelling a command kills its whole group. How promptly (the target:
// a p99 under 100 ms) is BenchmarkExecHardStop's to say, in `make bench`:
// a time bound here failed whenever the machine was busy.
func TestExecCancelKillsGroup(t *testing.T) {
	t.Parallel()
	cancelKillsGroup(t, newTestWorkspace(t, Options{}))
}

// TestExecSandboxedHardStop cancels a sandboxed command running in
// every namespace the sandbox uses: it must end and leave no process
// behind. How promptly (the target: a p99 under 100 ms) is the tools'
// BenchmarkSandboxedHardStop's to say.
func TestExecSandboxedHardStop(t *testing.T) {
	t.Parallel()
	cancelKillsGroup(t, gitWorkspace(t, Options{NoNetwork: true}))
}

// cancelKillsGroup cancels a command whose shell has a background child:
// Exec must return, report the kill, and leave nothing of the process
// group behind.
func cancelKillsGroup(t *testing.T, w *Workspace) {
	t.Helper()
	d, pgid := hardStop(t, w)
	t.Logf("Exec returned %v after cancel", d)
	assertGroupGone(t, pgid)
}

// hardStop runs a command whose shell has a background child, cancels it
// once the command has written its process group to a file, and returns
// how long Exec took to return after the cancel, and the group. Exec must
// report the kill, no member of the group may be alive after it, and it
// must return within seconds (more would be a cancel not kept).
func hardStop(tb testing.TB, w *Workspace) (time.Duration, int) {
	tb.Helper()
	pidFile := filepath.Join(w.Root(), "pid")
	os.Remove(pidFile) // the previous run's, in a benchmark
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- w.Exec(ctx, "sleep 60 & "+groupToFile+"; sleep 60", time.Minute, true)
	}()
	pgid := waitForPID(tb, pidFile)
	cancelled := time.Now()
	cancel()
	var res Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		tb.Fatal("Exec did not return after cancel")
	}
	d := time.Since(cancelled)
	mustFail(tb, res, "command cancelled; its process group was killed")
	assertNoLiveMember(tb, pgid)
	return d, pgid
}

// BenchmarkExecHardStop measures a hard stop of a command outside the
// sandbox: from the cancel to Exec's return, with no process of the group
// alive. It reports the median and the 99th percentile (the target, in
// cmd/benchtable: under 100 ms), the figures a shared machine's outliers
// leave readable.
func BenchmarkExecHardStop(b *testing.B) {
	w := newTestWorkspace(b, Options{})
	var ds []time.Duration
	for b.Loop() {
		d, _ := hardStop(b, w)
		ds = append(ds, d)
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), "median-ms")
	b.ReportMetric(float64(ds[min(len(ds)-1, len(ds)*99/100)])/float64(time.Millisecond), "p99-ms")
}

func TestExecBackgroundChildDoesNotHang(t *testing.T) {
	t.Parallel()
	w := newTestWorkspace(t, Options{})
	start := time.Now()
	// The first job keeps the output pipe open; the second does not hold it
	// but must still be killed with the group.
	res := w.Exec(context.Background(), groupToFile+"; sleep 100 & (sleep 100 >/dev/null 2>&1 &); echo done", time.Minute, true)
	// Waiting for the child would take its 100 s: ten catch that and leave
	// the whole suite on two busy cores its slack (it has taken 2.4 s).
	if d := time.Since(start); d > 10*time.Second {
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
