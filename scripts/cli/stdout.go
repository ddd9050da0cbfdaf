package cli

import (
	"io"
	"os"
	"sync"
)

// outWriter is the standard output of the commands that print records
// (status, sessions, config, models, doctor …). It writes to os.Stdout as
// it is at the time of the write (ACP's mode moves it) and keeps the first
// error, which Main turns into the command's failure when the command
// itself succeeded: a listing cut short by a full disk is one sentence
// and exit 1, not a quiet exit 0.
type outWriter struct {
	mu  sync.Mutex
	err error
}

func (w *outWriter) Write(p []byte) (int, error) {
	n, err := os.Stdout.Write(p)
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return n, err
}

// failed is the first error a write met, nil when none did.
func (w *outWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// stdout is where a command prints its records: the invocation's
// outWriter, or os.Stdout itself for a cli made without Main (tests).
func (c *cli) stdout() io.Writer {
	if c.out == nil {
		return os.Stdout
	}
	return c.out
}
