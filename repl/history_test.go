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
	sh := New(Options{Fs: afero.NewMemMapFs(), Root: "/p", Queue: q, In: pts, Out: pts, Err: pts,
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
	_, _ = ptm.Write([]byte("\x04"))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Ctrl-D did not end the shell")
	}
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
