package memory

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// TestLockHelperProcess is not a test: the tests below re-run the test
// binary with RALPH_LOCK_HELPER set, to get real, separate processes that
// hold locks, crash, and race each other.
func TestLockHelperProcess(t *testing.T) {
	mode := os.Getenv("RALPH_LOCK_HELPER")
	if mode == "" {
		t.Skip("helper process for the lock and registry tests")
	}
	fs := afero.NewOsFs()
	root := os.Getenv("RALPH_LOCK_ROOT")
	waitForGo := func() {
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin to start everyone at once
	}
	switch mode {
	case "hold":
		l, err := AcquireLock(fs, root, "child-session", false)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		b, _ := json.Marshal(l.Info())
		fmt.Println(string(b))
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0) // without Release, like a crash that closes the descriptor
	case "race":
		// Wait for the parent's go, so that all twenty try at once.
		fmt.Println("ready")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			os.Exit(1)
		}
		l, err := AcquireLock(fs, root, "", false)
		if errors.Is(err, ErrLocked) {
			os.Exit(3)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// Hold the lock until the parent has seen every other process
		// finish, so that a loaded machine cannot turn a late attempt
		// into a legitimate second owner.
		time.Sleep(500 * time.Millisecond)
		fmt.Println("won")
		_, _ = io.Copy(io.Discard, os.Stdin)
		if err := l.Release(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "registry":
		waitForGo()
		reg := OpenRegistry(fs, os.Getenv("RALPH_REG_DIR"))
		if err := reg.Update(RegistryEntry{Root: root, SessionID: "s-" + filepath.Base(root), Status: "running"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(2)
}

// helper is a running TestLockHelperProcess.
type helper struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr strings.Builder
}

func startHelper(t testing.TB, mode, root string, env ...string) *helper {
	t.Helper()
	h := &helper{lines: make(chan string, 4)}
	h.cmd = exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	h.cmd.Env = append(helperEnv(), append([]string{"RALPH_LOCK_HELPER=" + mode, "RALPH_LOCK_ROOT=" + root}, env...)...)
	h.cmd.Stderr = &h.stderr
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Kill()
			_ = h.cmd.Wait()
		}
	})
	return h
}

// helperEnv is the environment for re-executed test binaries. Under -race
// each would otherwise sleep a second on exit (GORACE atexit_sleep_ms),
// which is most of the run time of the multi-process tests.
func helperEnv() []string {
	return append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// next returns the helper's next line of output; ok is false once it has
// closed its output (exited).
func (h *helper) next(t testing.TB) (line string, ok bool) {
	t.Helper()
	select {
	case l, ok := <-h.lines:
		return l, ok
	case <-time.After(20 * time.Second):
		t.Fatal("helper did not answer in 20s")
	}
	return "", false
}

// line returns the helper's next line of output, which must come.
func (h *helper) line(t testing.TB) string {
	t.Helper()
	l, ok := h.next(t)
	if !ok {
		err := h.cmd.Wait()
		t.Fatalf("helper exited early (%v): %s", err, h.stderr.String())
	}
	return l
}

// holdingChild starts a child that holds the lock on root until killed.
func holdingChild(t *testing.T, root string) (*helper, LockInfo) {
	t.Helper()
	h := startHelper(t, "hold", root)
	var info LockInfo
	if err := json.Unmarshal([]byte(h.line(t)), &info); err != nil {
		t.Fatal(err)
	}
	if info.PID != h.cmd.Process.Pid {
		t.Fatalf("child reports pid %d, started %d", info.PID, h.cmd.Process.Pid)
	}
	return h, info
}

func (h *helper) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
}

func mustRelease(t testing.TB, l *Lock) {
	t.Helper()
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

func lockedError(t *testing.T, err error) *LockedError {
	t.Helper()
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("want *LockedError matching ErrLocked, got %v", err)
	}
	return le
}

func readLockFile(t *testing.T, fs afero.Fs, root string) LockInfo {
	t.Helper()
	b, err := afero.ReadFile(fs, filepath.Join(root, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	var info LockInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatalf("lock file is not one JSON value: %v\n%s", err, b)
	}
	return info
}

func writeLockFile(t *testing.T, fs afero.Fs, root string, info LockInfo) {
	t.Helper()
	if err := WriteFileAtomic(fs, filepath.Join(root, LockFile), marshalInfo(info), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantStatus(t *testing.T, fs afero.Fs, root string, want Staleness) LockInfo {
	t.Helper()
	info, st, err := ReadLock(fs, root)
	if err != nil || st != want {
		t.Fatalf("ReadLock = %q, %v; want %q", st, err, want)
	}
	return info
}

func writeRaw(t *testing.T, fs afero.Fs, root, s string) {
	t.Helper()
	if err := WriteFileAtomic(fs, filepath.Join(root, LockFile), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// deadProcess returns the identity of a process that has exited and been
// reaped.
func deadProcess(t *testing.T) LockInfo {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = helperEnv()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	start, err := ProcessStartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := ProcessStartTime(pid); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ProcessStartTime of a reaped process: %v", err)
	}
	if ProcessAlive(pid, start) {
		t.Fatal("a reaped process is alive")
	}
	info := selfInfo("dead")
	info.PID, info.StartTime = pid, start
	return info
}

func TestLockProcessAlive(t *testing.T) {
	st, err := ProcessStartTime(os.Getpid())
	if err != nil || st == 0 {
		t.Fatalf("ProcessStartTime(self) = %d, %v", st, err)
	}
	for _, c := range []struct {
		pid   int
		start uint64
		want  bool
	}{{os.Getpid(), st, true}, {os.Getpid(), 0, true}, {os.Getpid(), st + 1, false}, {0, 0, false}, {-1, 0, false}} {
		if got := ProcessAlive(c.pid, c.start); got != c.want {
			t.Errorf("ProcessAlive(%d, %d) = %v", c.pid, c.start, got)
		}
	}
}
