package repl

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/chzyer/readline"
)

// A paint waits for readline to mark its reader while a prompt is being
// printed (awaitReading); readline unmarks it between two keys too, until
// its key loop has dealt with the key, and that loop waits in filterRune
// for the paint. The paint must not wait for a key loop that waits for
// it: a Ctrl-C typed then stopped the run 100 ms late.
func TestAPaintDoesNotWaitForTheKeyItHolds(t *testing.T) {
	s, _ := testShell(t)
	rl, err := readline.NewEx(&readline.Config{
		Stdin:          io.NopCloser(strings.NewReader("")),
		Stdout:         io.Discard,
		Stderr:         io.Discard,
		FuncIsTerminal: func() bool { return false },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rl.Close() })
	s.rl = rl
	// A line is starting, and readline's reader is not marked: it has
	// not been asked to read.
	s.starting.Store(true)
	if rl.Terminal.IsReading() {
		t.Fatal("readline's reader is marked before any Readline")
	}
	// The paint in progress holds the painter's lock; a key reaches
	// filterRune meanwhile.
	s.scr.paintMu.Lock()
	filtered := make(chan struct{})
	go func() {
		defer close(filtered)
		s.filterRune('x')
	}()
	eventually(t, "the key to wait for the paint", func() bool { return s.keyWaiting.Load() == 1 })
	start := time.Now()
	s.awaitReading()
	s.awaitReading()
	waited := time.Since(start)
	s.scr.paintMu.Unlock()
	<-filtered
	// Without the key's mark each wait runs to its 50 ms deadline.
	if waited >= 50*time.Millisecond {
		t.Fatalf("the paint's two writes waited %s for a key loop that waits for the paint", waited)
	}
	if s.keyWaiting.Load() != 0 {
		t.Fatalf("keyWaiting = %d after the key went through", s.keyWaiting.Load())
	}
}
