package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// runEnd is how the run a watch follows ended, for the watch's own exit
// code: the code the run itself exits with. Its last result says it as
// the run's own face reads it (ExitCode: 0, 1, or 130 for a stop — a
// SIGTERM's 143 does not travel in an event); without one (a ralph
// killed), the session's record does: failed is 1, interrupted 130,
// still running (nobody saved an end) 1, else 0. A chat ends as the chat
// process does: 0 when the person left it, whatever its last run did.
type runEnd struct {
	// followed says a running ralph was followed; a session shown from
	// its record, after its end, is a view that went well: 0.
	followed bool
	res      *coordinator.Result
}

// see notes the run's result among the events.
func (e *runEnd) see(ev coordinator.Event) {
	if ev.Type == coordinator.EventResult && ev.Result != nil && mainAgent(ev.AgentID) {
		r := *ev.Result
		e.res = &r
	}
}

// code is the exit code of the run followed, read once it ended.
func (e *runEnd) code(fs afero.Fs, root, session string) int {
	switch {
	case !e.followed:
		return ExitOK
	}
	st, err := memory.LoadSessionState(fs, root, session)
	switch {
	case err == nil && st.Mode == project.ModeChat:
		// A chat is many runs, and a stopped one is no end: the chat
		// exits 0 when the person leaves it, and so does its watch,
		// unless nobody saved an end (a chat killed).
		if st.Status == memory.StatusRunning {
			return ExitFailed
		}
		return ExitOK
	case e.res != nil:
		return ExitCode(*e.res)
	case err != nil:
		return ExitOK
	}
	switch st.Status {
	case memory.StatusFailed, memory.StatusRunning:
		return ExitFailed
	case memory.StatusInterrupted:
		return 130
	}
	return ExitOK
}

// watchKeys reads the keys typed at the watch's terminal, when its input
// is one that can be read a key at a time: q quits (quit is called). The
// terminal is in cbreak mode meanwhile (keys unechoed, one by one; Ctrl-C
// still signals), and stop puts it back as it was: the caller defers it,
// and stops on a signal too, so every way out restores the terminal. A
// watch whose input is no terminal (a pipe, /dev/null, a script) reads
// nothing from it.
func watchKeys(in *os.File, quit func()) (stop func()) {
	if !terminal.OneKey || in == nil || !terminal.IsTerminal(in) {
		return func() {}
	}
	fd := int(in.Fd())
	mode, err := terminal.Cbreak(fd)
	if err != nil {
		return func() {}
	}
	wakeR, wakeW, err := os.Pipe()
	if err != nil {
		_ = mode.Restore()
		return func() {}
	}
	done := make(chan struct{})
	stopping := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			n, err := terminal.ReadWait(fd, int(wakeR.Fd()), buf, -1)
			select {
			case <-stopping:
				return
			default:
			}
			if err != nil || errors.Is(err, io.EOF) {
				return
			}
			for _, b := range buf[:n] {
				if b == 'q' || b == 'Q' {
					quit()
				}
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(stopping)
		_, _ = wakeW.Write([]byte{0})
		<-done
		_ = mode.Restore()
		wakeR.Close()
		wakeW.Close()
	})
}

// watchSignals ends the watch (cancel) on Ctrl-C or SIGTERM rather than
// letting the signal end the process, so that the terminal watchKeys
// changed is put back; code is then the exit code the signal means
// (130, 143), 0 while none came. stop ends the watch on signals.
func watchSignals(ctx context.Context, cancel context.CancelFunc) (code func() int, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	got := 0
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			mu.Lock()
			got = interrupts.ExitCode(s)
			mu.Unlock()
			cancel()
		case <-ctx.Done():
		case <-done:
		}
	}()
	return func() int {
			mu.Lock()
			defer mu.Unlock()
			return got
		}, sync.OnceFunc(func() {
			signal.Stop(ch)
			close(done)
		})
}
