package repl

import (
	"io"
	"strings"
	"sync"
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
	for name, tc := range map[string]struct {
		held   func(*Shell) *sync.Mutex
		waiter func(*Shell)
	}{
		// A paint holds paintMu; readline's key loop has read a key
		// (filterRune) or is about to print a prompt (promptComing).
		"key":    {func(s *Shell) *sync.Mutex { return &s.scr.paintMu }, func(s *Shell) { s.filterRune('x') }},
		"prompt": {func(s *Shell) *sync.Mutex { return &s.scr.paintMu }, func(s *Shell) { s.promptComing() }},
		// A prompt update holds promptMu; the key loop reads an Enter,
		// which asks whether the line ends at the status prompt.
		"status": {func(s *Shell) *sync.Mutex { return &s.promptMu }, func(s *Shell) {
			s.promptOut = &promptOut{w: io.Discard}
			s.filterRune(readline.CharEnter)
		}},
	} {
		t.Run(name, func(t *testing.T) { heldForReadline(t, tc.held, tc.waiter) })
	}
}

func heldForReadline(t *testing.T, held func(*Shell) *sync.Mutex, waiter func(*Shell)) {
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
	// The paint or update in progress holds its lock; readline comes to
	// wait for it meanwhile.
	mu := held(s)
	mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		waiter(s)
	}()
	eventually(t, "readline to wait for the paint", func() bool { return s.readlineWaiting.Load() == 1 })
	start := time.Now()
	s.awaitReading()
	s.awaitReading()
	waited := time.Since(start)
	mu.Unlock()
	<-done
	// Without the mark each wait runs to its 50 ms deadline.
	if waited >= 50*time.Millisecond {
		t.Fatalf("the paint's two writes waited %s for readline, which waits for the paint", waited)
	}
	if n := s.readlineWaiting.Load(); n != 0 {
		t.Fatalf("readlineWaiting = %d once readline went on", n)
	}
}
