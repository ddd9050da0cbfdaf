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

// wake ends a wait of readWait: a byte down the wake pipe.
func (t *ttyInput) wake() { _, _ = unix.Write(t.wakeW, []byte{0}) }

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
