//go:build unix

package repl

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

func newTTYInput(fd int, onEsc func()) (*ttyInput, error) {
	p, err := wakePipe()
	if err != nil {
		return nil, err
	}
	return &ttyInput{fd: fd, wakeR: p[0], wakeW: p[1], onEsc: onEsc}, nil
}

// Inject queues bytes to be read as if typed; the shell uses it to wake
// readline (a Ctrl-C) when a signal asks it to leave.
func (t *ttyInput) Inject(b []byte) {
	t.mu.Lock()
	t.injected = append(t.injected, b...)
	t.mu.Unlock()
	_, _ = unix.Write(t.wakeW, []byte{0})
}

// Close makes pending and later reads return io.EOF.
func (t *ttyInput) Close() error {
	t.mu.Lock()
	already := t.closed
	t.closed = true
	t.mu.Unlock()
	if !already {
		_, _ = unix.Write(t.wakeW, []byte{0})
	}
	return nil
}

// release closes the wake-up pipe once no read can be pending any more.
func (t *ttyInput) release() {
	_ = unix.Close(t.wakeR)
	_ = unix.Close(t.wakeW)
}

// readWait reads what the terminal has, waiting at most timeoutMS (-1:
// forever). It returns 0 bytes when it timed out or was woken up.
func (t *ttyInput) readWait(buf []byte, timeoutMS int) (int, error) {
	return terminal.ReadWait(t.fd, t.wakeR, buf, time.Duration(timeoutMS)*time.Millisecond)
}
