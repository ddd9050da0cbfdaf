//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers/approval"
)

// On a terminal a question takes one key: an unoffered key is answered
// at once with the keys it takes and the question goes on waiting; an
// offered key answers without Enter; Enter answers a "[y/N]" with its
// default; the terminal's modes are put back.
func TestAskKeyOnATerminal(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { pts.Close(); ptm.Close() })
	go func() { _, _ = io.Copy(io.Discard, ptm) }()
	before, err := terminal.Save(int(pts.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	out := &text.LockedBuffer{}
	q := newQuestions(out, func() (io.ReadCloser, error) { return pts, nil })
	type result struct {
		ans approval.Answer
		err error
	}
	done := make(chan result, 1)
	go func() {
		ans, err := q.Ask(context.Background(), approval.Question{Command: "make", Remember: []string{"make"}})
		done <- result{ans, err}
	}()
	waitOutput(t, out, "allow? y/n/t/a/p ›")
	_, _ = ptm.WriteString("x")
	waitOutput(t, out, "press y, n, t, a, p or ?")
	select {
	case r := <-done:
		t.Fatalf("an unoffered key answered: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	_, _ = ptm.WriteString("a")
	if r := <-done; r.err != nil || r.ans != approval.Always {
		t.Fatalf("Ask = %+v", r)
	}

	yes := make(chan bool, 1)
	go func() { yes <- q.confirm(context.Background(), "go on?") }()
	waitOutput(t, out, "[y/N]")
	_, _ = ptm.WriteString("\r")
	if <-yes {
		t.Fatal("Enter at [y/N] was yes")
	}
	after, err := terminal.Save(int(pts.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatal("the terminal's modes were not put back")
	}
}

func waitOutput(t *testing.T, out *text.LockedBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(out.String(), want) {
			return
		}
	}
	t.Fatalf("no %q in %q", want, out.String())
}
