package repl

import (
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// rawMode switches the shell's terminal (not necessarily file descriptor
// 0, which readline assumes) in and out of raw mode around each read. It
// uses the terminal package's raw mode, which keeps output processing on
// so that "\n" still starts a new line.
type rawMode struct {
	mu    sync.Mutex
	fd    int
	state *terminal.Mode
}

func (r *rawMode) enter() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, err := terminal.Raw(r.fd)
	if err == nil && r.state == nil {
		r.state = st
	}
	return err
}

func (r *rawMode) exit() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil {
		return nil
	}
	err := r.state.Restore()
	r.state = nil
	return err
}

// aboveWriter writes above the prompt through readline, which clears the
// prompt, writes and draws the prompt again, but only while its terminal
// reader is marked as reading: a write between readline printing the
// prompt and that mark would land after the prompt. starting closes that
// gap: it is set just before readline prints the prompt and cleared when
// a line ends, and a write while it is set waits (microseconds) for the
// reader to be marked.
type aboveWriter struct {
	s *Shell
	w io.Writer
}

func (a *aboveWriter) Write(p []byte) (int, error) {
	a.s.awaitReading()
	return a.w.Write(p)
}

// awaitReading waits, for up to 50 ms, while readline is printing the
// prompt but not yet marked as reading. It reports whether readline is
// reading now: what is drawn through it from then on is drawn at once.
//
// Readline's reader is unmarked between two keys too, until its key loop
// has dealt with the one it read, and that loop waits in filterRune for
// the paint in progress, whose writes call this: the wait would only end
// at its deadline, twice in a paint of two writes, and a Ctrl-C typed
// then stopped the run 100 ms late (BenchmarkChatHardStop's command
// p99, one run in four); an update of the prompt, which waits here
// holding promptMu, held back the key loop's endsAtStatus the same way.
// So a readline goroutine waiting for either lock (readlineLock) ends
// the wait: it prints nothing until the lock is let go, and what is written
// meanwhile goes out as after the deadline, which rowClearing and the
// next prompt update already deal with.
func (s *Shell) awaitReading() bool {
	if s.starting.Load() && !s.rl.Terminal.IsReading() {
		deadline := time.Now().Add(50 * time.Millisecond)
		for s.starting.Load() && !s.rl.Terminal.IsReading() && s.readlineWaiting.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Microsecond)
		}
	}
	return s.rl.Terminal.IsReading()
}

// Signals: SIGINT is a Ctrl-C the terminal sent while readline was not in
// raw mode (between two lines) or someone sent with kill; it is handled
// exactly like the key. SIGTERM and SIGHUP stop the work, save and leave.
func notifySignals(ch chan os.Signal) {
	signal.Notify(ch, shellSignals...)
}

func stopSignals(ch chan os.Signal) { signal.Stop(ch) }

func (s *Shell) onSignal(sig os.Signal) {
	switch sig {
	case resizeSignal:
		s.syncWidth()
		// The live region is drawn again for the new size (screen.frameLocked).
		s.scr.resized()
	case syscall.SIGINT:
		s.in.Inject([]byte{3})
	case syscall.SIGTERM, syscall.SIGHUP:
		s.quit(128 + int(sig.(syscall.Signal)))
	}
}

// termGuard puts the terminal back as it found it, once, on every way out.
type termGuard struct {
	state *terminal.Mode
	out   io.Writer
	once  sync.Once
}

func saveTerminal(fd int, out io.Writer) (*termGuard, error) {
	st, err := terminal.Save(fd)
	if err != nil {
		return nil, err
	}
	return &termGuard{state: st, out: out}, nil
}

func (g *termGuard) restore() {
	g.once.Do(func() {
		_, _ = io.WriteString(g.out, "\x1b[?2004l")
		_ = g.state.Restore()
	})
}

// crashGuard restores the terminal before a panic in one of the shell's
// goroutines ends the process, which would skip Run's deferred restore.
func (s *Shell) crashGuard() {
	if p := recover(); p != nil {
		if s.guard != nil {
			s.guard.restore()
		}
		panic(p)
	}
}
