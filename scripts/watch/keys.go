package watch

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// Keys reads the keys typed at the watch's terminal, when its input
// is one that can be read a key at a time: q quits (quit is called). The
// terminal is in cbreak mode meanwhile (keys unechoed, one by one; Ctrl-C
// still signals), and stop puts it back as it was: the caller defers it,
// and stops on a signal too, so every way out restores the terminal. A
// watch whose input is no terminal (a pipe, /dev/null, a script) reads
// nothing from it.
func Keys(in *os.File, quit func()) (stop func()) {
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

// Signals ends the watch (cancel) on Ctrl-C or SIGTERM rather than
// letting the signal end the process, so that the terminal Keys
// changed is put back; code is then the exit code the signal means
// (130, 143), 0 while none came. stop ends the watch on signals.
func Signals(ctx context.Context, cancel context.CancelFunc) (code func() int, stop func()) {
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
