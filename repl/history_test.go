//go:build unix

package repl

import (
	"context"
	"fmt"
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
	if h := openHistory(door, hist, func(s string) string { return s + "echo scrubbed\n" }); len(h.last(10)) != 0 {
		t.Fatalf("the history read through the link: %q", h.last(10))
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "# the person's\n" {
		t.Fatalf("~/.bashrc = %q", b)
	}
}

// TestHistoryFileStaysBounded: a history file that has grown past twice
// what the shell keeps is cut to the kept lines as the shell opens it,
// secrets redacted, so a chat's start does not grow with all that was
// ever typed; a file within the bound and without a secret is left as it
// is, byte for byte.
func TestHistoryFileStaysBounded(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	redact := memory.NewRedactor(key).Redact
	hist := filepath.Join(t.TempDir(), "history")
	var b strings.Builder
	for i := range 5 * historyKeep {
		switch i {
		case 3: // in the part that is dropped
			b.WriteString("an old line with " + key + "\n")
		case 5*historyKeep - 2: // in the part that is kept
			b.WriteString("a recent line with " + key + "\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	if err := os.WriteFile(hist, []byte(b.String()), 0o640); err != nil {
		t.Fatal(err)
	}
	h := openHistory(historyDoor(t, hist), hist, redact)
	got := h.last(2 * historyKeep)
	if len(got) != historyKeep || got[0] != fmt.Sprintf("line %d", 4*historyKeep) || got[historyKeep-2] != "a recent line with [REDACTED]" {
		t.Fatalf("kept %d lines, first %q, next to last %q", len(got), got[0], got[len(got)-2])
	}
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(got, "\n") + "\n"; string(data) != want {
		t.Fatalf("the file was not cut to the kept lines: %d bytes, want %d", len(data), len(want))
	}
	if fi, err := os.Stat(hist); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("history mode after the cut: %v %v", fi, err)
	}

	// Within the bound, without a secret: not written at all.
	b.Reset()
	for i := range historyKeep + historyKeep/2 {
		fmt.Fprintf(&b, "line %d\n\n", i)
	}
	if err := os.WriteFile(hist, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(hist)
	h = openHistory(historyDoor(t, hist), hist, redact)
	if got := h.last(2 * historyKeep); len(got) != historyKeep || got[len(got)-1] != fmt.Sprintf("line %d", historyKeep+historyKeep/2-1) {
		t.Fatalf("kept %d lines, last %q", len(got), got[len(got)-1])
	}
	after, _ := os.Stat(hist)
	if data, _ := os.ReadFile(hist); string(data) != b.String() || !os.SameFile(before, after) {
		t.Fatal("a history file within the bound and without a secret was rewritten")
	}
}
