//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperPid runs `echo $PPID` under p: the parent of every command is the
// helper that started it.
func helperPid(t *testing.T, p *Policy) int {
	t.Helper()
	out, ok, _ := run(t, p, findHelper+"; echo $h")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if !ok || err != nil || pid <= 1 {
		t.Fatalf("the helper's pid: %q", out)
	}
	return pid
}

// findHelper sets $h to the helper's pid, as /proc (the outer PID
// namespace's) says: $PPID is 0 in a command's own PID namespace, and a
// command under a reaper has the reaper for its parent.
const findHelper = `read -r _ _ _ h _ < /proc/self/stat; ` +
	`if tr '\0' ' ' < /proc/$h/cmdline | grep -q __reap; then read -r _ _ _ h _ < /proc/$h/stat; fi`

func TestOneHelperServesEveryCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, false)
	first := helperPid(t, p)
	if first == os.Getpid() {
		t.Fatal("the command was started by the test process, not a helper")
	}
	for i := 0; i < 5; i++ {
		if got := helperPid(t, p); got != first {
			t.Fatalf("command %d had helper %d, the first had %d", i, got, first)
		}
	}
	// Confinement holds for every command, not only the first.
	for i := 0; i < 3; i++ {
		run(t, p, "echo x > "+f.outside+"/late.txt")
		fileIs(t, filepath.Join(f.outside, "late.txt"), "")
	}
}

func TestHelperIsReplacedWhenGuardedPathsChange(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	p := &Policy{Mode: WorkspaceWrite, Root: root, Network: true}
	before := helperPid(t, p)
	// A repository created after the helper started must be protected
	// from the next command on, which needs a helper with its mounts.
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	after := helperPid(t, p)
	if after == before {
		t.Fatal("the helper was kept although .git appeared")
	}
	if out, ok, _ := run(t, p, "echo '[core]' >> .git/config"); ok {
		t.Fatalf("the new .git/config was writable: %s", out)
	}
	if err := syscall.Kill(before, 0); err == nil {
		// It may be a zombie for a moment while it is reaped.
		time.Sleep(100 * time.Millisecond)
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", before)); err == nil && !strings.Contains(string(b), ") Z") {
			t.Errorf("the old helper %d still runs", before)
		}
	}
}

func TestAHelperThatDiesIsReportedAndTheNextCommandGetsANewOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	first := helperPid(t, p)
	// A command under a reaper can kill its helper (through the thread
	// that forked it, which shares its Landlock domain); in a PID
	// namespace of its own it cannot name it. A killed helper's commands
	// die with it and the loss is reported rather than taken for a
	// normal end. The helper may die before it could even say the
	// command started.
	proc, pr, err := start(t, p, findHelper+"; for t in /proc/$h/task/*; do kill -9 ${t##*/} 2>/dev/null || { echo unreachable; exit 0; }; done; sleep 30")
	var out string
	if err == nil {
		var o Outcome
		out, _, o = finish(t, proc, pr)
		err = o.Err
	}
	unreachable := err == nil && strings.Contains(out, "unreachable")
	if !unreachable && (err == nil || !strings.Contains(err.Error(), "helper stopped")) {
		t.Fatalf("outcome %v, output %q; want the helper's death reported, or the helper out of the command's reach", err, out)
	}
	first = helperPid(t, p)
	// Killed from outside while a command runs: the same.
	proc, pr, err = start(t, p, "sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	helper := helperPid(t, p)
	if err := syscall.Kill(helper, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	_, _, o := finish(t, proc, pr)
	if o.Err == nil || !strings.Contains(o.Err.Error(), "helper stopped") {
		t.Fatalf("outcome %v; want the helper's death reported", o.Err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("the command outlived its helper by %s", d)
	}
	if next := helperPid(t, p); next == first || next == helper {
		t.Fatal("the dead helper was used again")
	}
}

func TestCommandsCannotTraceTheHelper(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	// Reading another process's memory or environment needs ptrace
	// access; the helper is not dumpable and the commands lack
	// CAP_SYS_PTRACE even as root in the namespace.
	for _, script := range []string{
		"cat /proc/$PPID/environ",
		"head -c1 /proc/$PPID/mem",
		"readlink /proc/$PPID/fd/0",
		"readlink /proc/$PPID/exe",
	} {
		if out, ok, _ := run(t, p, script); ok {
			t.Errorf("%q succeeded: %q", script, out)
		}
	}
}

func TestLargeCommandsAndConcurrentCommands(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	// Larger than a packet (and a pipe's buffer), smaller than execve's
	// limit for one argument.
	big := strings.Repeat("y", 120<<10)
	out, ok, _ := run(t, p, "printf %s \"$BIG\" | wc -c; echo "+big+" | wc -c", "BIG="+big)
	if !ok || strings.Fields(out)[0] != strconv.Itoa(len(big)) || strings.Fields(out)[1] != strconv.Itoa(len(big)+1) {
		t.Fatalf("large command: ok=%v %q", ok, out)
	}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proc, pr, err := start(t, p, fmt.Sprintf("echo %d; exit %d", i, i%4))
			if err != nil {
				t.Error(err)
				return
			}
			out, ws, o := finish(t, proc, pr)
			if o.Err != nil || out != fmt.Sprintf("%d\n", i) || ws.ExitStatus() != i%4 {
				t.Errorf("command %d: %q, status %d, %v", i, out, ws.ExitStatus(), o.Err)
			}
		}()
	}
	wg.Wait()
}

func TestAProgramThatCannotStartIsAnError(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(ReadOnly, true)
	_, err := runnerFor(t, p).Start(t.Context(), Command{Path: "/nonexistent/prog", Args: []string{"prog"}, Dir: f.root})
	if err == nil || !strings.Contains(err.Error(), "cannot start /nonexistent/prog") {
		t.Fatalf("Start = %v", err)
	}
	// The helper serves the next command all the same.
	if out, ok, _ := run(t, p, "echo still"); !ok || out != "still\n" {
		t.Fatalf("after a failed start: %q", out)
	}
}

func TestClosedRunnerStopsItsHelperAndRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(ReadOnly, true)
	r := NewRunner(p)
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	proc, err := r.Start(t.Context(), Command{Path: "/bin/sleep", Args: []string{"sleep", "60"}, Dir: f.root, Stdout: pw, Stderr: pw})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	select {
	case <-proc.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the command outlived its closed runner")
	}
	if _, o := proc.Wait(); o.Err == nil {
		t.Error("a command killed by Close reported a normal end")
	}
	if _, err := r.Start(t.Context(), Command{Path: "/bin/true", Args: []string{"true"}}); err == nil {
		t.Error("a closed runner started a command")
	}
}

// TestEveryTestAsAnUnprivilegedUser runs this package's tests again as
// nobody when the suite runs as root (as CI does): an ordinary user's
// helper holds no capability after exec unless it is given ambient ones,
// and a sandbox that only root can use helps nobody.
func TestEveryTestAsAnUnprivilegedUser(t *testing.T) {
	if os.Getenv("RALPH_TEST_UNPRIVILEGED") != "" {
		t.Skip("this is the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("the suite runs unprivileged already")
	}
	dir, err := os.MkdirTemp("", "ralph-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil || os.Chmod(dir, 0o755) != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.v", fmt.Sprintf("-test.short=%v", testing.Short()))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RALPH_TEST_UNPRIVILEGED=1", "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "--- PASS"); n < 10 {
		t.Fatalf("as nobody only %d tests passed:\n%s", n, out)
	}
}
