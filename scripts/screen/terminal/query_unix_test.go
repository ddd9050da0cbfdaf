//go:build unix

package terminal

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ralph-dev/ralph/memory/text"
)

// terminalAnswering opens a pseudo-terminal whose other end answers the
// queries with reply (nothing when reply is "") and records what was
// written to it.
func terminalAnswering(t *testing.T, reply string) (*os.File, *text.LockedBuffer) {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { pts.Close(); ptm.Close() })
	seen := &text.LockedBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			n, err := ptm.Read(buf)
			if err != nil {
				return
			}
			seen.Write(buf[:n])
			if strings.Contains(seen.String(), "\x1b[c") && reply != "" {
				ptm.Write([]byte(reply))
				return
			}
		}
	}()
	t.Cleanup(func() { pts.Close(); <-done })
	return pts, seen
}

func TestQueryBackground(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		dark, ok    bool
	}{
		{"light", "\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;22c", false, true},
		{"dark", "\x1b]11;rgb:2828/2c2c/3434\x07\x1b[?1;2c", true, true},
		{"no OSC 11", "\x1b[?1;2c", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pts, _ := terminalAnswering(t, tc.reply)
			start := time.Now()
			// A timeout far above the bound: a query that waited for it
			// instead of the answer fails, and a busy machine does not.
			dark, ok := queryBackground(pts, 20*time.Second)
			if dark != tc.dark || ok != tc.ok {
				t.Errorf("queryBackground = %v, %v; want %v, %v", dark, ok, tc.dark, tc.ok)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("an answering terminal took %s", d)
			}
		})
	}
}

// A terminal that answers nothing costs the timeout, no more, and its
// modes are as they were.
func TestQueryBackgroundSilentTerminal(t *testing.T) {
	pts, seen := terminalAnswering(t, "")
	before, err := termState(pts)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, ok := queryBackground(pts, 100*time.Millisecond); ok {
		t.Error("a silent terminal gave an answer")
	}
	// At least the timeout; the upper bound catches a query that does
	// not keep it, with a busy machine's slack.
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("the query took %s, want about 100ms", d)
	}
	after, err := termState(pts)
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Errorf("terminal modes changed: %s → %s", before, after)
	}
	time.Sleep(20 * time.Millisecond)
	if got := seen.String(); got != "\x1b]11;?\x1b\\\x1b[c" {
		t.Errorf("wrote %q to the terminal", got)
	}
}

// Nothing is asked of a file that is not a terminal.
func TestQueryBackgroundNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := queryBackground(f, time.Second); ok {
		t.Error("a file answered")
	}
	if st, _ := f.Stat(); st.Size() != 0 {
		t.Errorf("%d bytes were written to a file", st.Size())
	}
}
