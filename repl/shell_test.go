//go:build unix

package repl

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// lockedOutput collects what the shell draws on the terminal.
type lockedOutput struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedOutput) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestShellInAPTYLeavesNothingBehind runs the whole shell in this process
// on a pseudo-terminal: a message, a queued follow-up, Ctrl-D. Afterwards
// every goroutine the shell (and readline under it) started has ended,
// the terminal's settings are as before, and the history file holds the
// lines.
func TestShellInAPTYLeavesNothingBehind(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { _ = pts.Close(); _ = ptm.Close() })
	_ = pty.Setsize(ptm, &pty.Winsize{Rows: 30, Cols: 100})
	out := &lockedOutput{}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(out, ptm); close(copied) }()
	// os/signal starts its one watcher goroutine on first use; start it
	// before counting.
	warm := make(chan os.Signal, 1)
	signal.Notify(warm, syscall.SIGWINCH)
	signal.Stop(warm)
	termiosBefore, err := terminal.Save(int(pts.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	baseline := runtime.NumGoroutine()

	q := interrupts.NewQueue()
	fc := &fakeCoord{queue: q, release: make(chan struct{})}
	hist := filepath.Join(t.TempDir(), "history")
	sh := New(Options{Fs: historyDoor(t, hist), Root: filepath.Dir(hist), Queue: q, In: pts, Out: pts, Err: pts, HistoryFile: hist})
	done := make(chan int, 1)
	go func() { done <- sh.Run(context.Background(), fc) }()

	waitOut := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(out.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q on the terminal:\n%q", what, out.String())
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitOut("ralph>")
	_, _ = ptm.Write([]byte("hello\r"))
	eventually(t, "the run", func() bool { return len(fc.seen()) == 1 })
	_, _ = ptm.Write([]byte("and then this\r"))
	waitOut("queued")
	fc.release <- struct{}{}
	eventually(t, "the queued message to run", func() bool { return len(fc.seen()) == 2 })
	fc.release <- struct{}{}
	eventually(t, "the shell to go idle", func() bool { return !sh.busy() })
	if code := pressCtrlD(t, ptm, done); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got := fc.seen(); !reflect.DeepEqual(got, []string{"hello", "and then this"}) {
		t.Fatalf("prompts = %q", got)
	}
	termiosAfter, err := terminal.Save(int(pts.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(termiosAfter, termiosBefore) {
		t.Fatalf("terminal settings changed:\nbefore %+v\nafter  %+v", *termiosBefore, *termiosAfter)
	}
	if data, _ := os.ReadFile(hist); string(data) != "hello\nand then this\n" {
		t.Fatalf("history file = %q", data)
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left behind (baseline %d):\n%s", runtime.NumGoroutine()-baseline, baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
	// With the last slave descriptor closed, reading the master fails
	// (EIO), which ends the copy; closing the master would not.
	_ = pts.Close()
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		t.Error("the terminal reader did not end")
	}
	_ = ptm.Close()
}

// A panic in one of the shell's goroutines restores the terminal before
// it ends the process.
func TestCrashGuardRestoresTheTerminal(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer ptm.Close()
	defer pts.Close()
	fd := int(pts.Fd())
	before, _ := terminal.Save(fd)
	g, err := saveTerminal(fd, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := &Shell{guard: g}
	if _, err := terminal.Raw(fd); err != nil {
		t.Fatal(err)
	}
	var repanicked any
	func() {
		defer func() { repanicked = recover() }()
		defer s.crashGuard()
		panic("boom")
	}()
	after, _ := terminal.Save(fd)
	if repanicked != "boom" || !reflect.DeepEqual(after, before) {
		t.Fatalf("re-panicked with %v; terminal restored: %v", repanicked, reflect.DeepEqual(after, before))
	}
}
