//go:build unix

package repl

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// TestHistoryRedactsSecrets: a key typed at the prompt reaches the
// coordinator as typed but the history file only as [REDACTED], and a key
// already in the file from before is scrubbed when the shell opens it.
func TestHistoryRedactsSecrets(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { _ = pts.Close(); _ = ptm.Close() })
	_ = pty.Setsize(ptm, &pty.Winsize{Rows: 30, Cols: 100})
	out := &lockedOutput{}
	go func() { _, _ = io.Copy(out, ptm) }()

	const key = "sk-test-0123456789abcdef"
	hist := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(hist, []byte("old line with "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := interrupts.NewQueue()
	fc := &fakeCoord{queue: q, release: make(chan struct{})}
	sh := New(Options{Fs: historyDoor(t, hist), Root: filepath.Dir(hist), Queue: q, In: pts, Out: pts, Err: pts,
		HistoryFile: hist, Redact: memory.NewRedactor(key).Redact})
	done := make(chan int, 1)
	go func() { done <- sh.Run(context.Background(), fc) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "ralph>") {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt:\n%q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	_, _ = ptm.Write([]byte("my key is " + key + "\r"))
	eventually(t, "the run", func() bool { return len(fc.seen()) == 1 })
	fc.release <- struct{}{}
	eventually(t, "the shell to go idle", func() bool { return !sh.busy() })
	pressCtrlD(t, ptm, done)
	if got := fc.seen(); len(got) != 1 || got[0] != "my key is "+key {
		t.Fatalf("the coordinator got %q; the message itself is not the history's business", got)
	}
	data, _ := os.ReadFile(hist)
	if want := "old line with [REDACTED]\nmy key is [REDACTED]\n"; string(data) != want {
		t.Fatalf("history file = %q, want %q", data, want)
	}
	if fi, err := os.Stat(hist); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history mode: %v %v", fi, err)
	}
}

// historyDoor is the project's door on the directory of hist, through
// which the shell reads and appends its history as it does in a project.
func historyDoor(t *testing.T, hist string) afero.Fs {
	t.Helper()
	door, err := rootfs.New(filepath.Dir(hist))
	if err != nil {
		t.Fatal(err)
	}
	return door
}

// TestHistoryFollowsNoLink: a command that links .ralph/history to the
// person's ~/.bashrc gets nothing appended there; readline itself is
// given no history file to open.
func TestHistoryFollowsNoLink(t *testing.T) {
	base := t.TempDir()
	proj, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	for _, d := range []string{filepath.Join(proj, ".ralph"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bashrc := filepath.Join(home, ".bashrc")
	if err := os.WriteFile(bashrc, []byte("# the person's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(proj, ".ralph", "history")
	if err := os.Symlink(bashrc, hist); err != nil {
		t.Fatal(err)
	}
	door, err := rootfs.New(proj)
	if err != nil {
		t.Fatal(err)
	}
	appendHistory(door, hist, "echo pwned")
	scrubHistory(door, hist, func(s string) string { return s + "echo scrubbed\n" })
	if h := loadHistory(door, hist); len(h.last(10)) != 0 {
		t.Fatalf("the history read through the link: %q", h.last(10))
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "# the person's\n" {
		t.Fatalf("~/.bashrc = %q", b)
	}
}
