package cli

import (
	"io"
	"os"
	"sync"
)

// outWriter is the standard output of every command: the command tree's
// own (help, the version), the records (status, sessions, config, models,
// doctor …) and the one-shot's faces (a task's answer or result object,
// a run's, a plan's, a review's). It
// writes to os.Stdout as it is at the time of the write (ACP's mode moves
// it) and keeps the first error, which Main turns into the command's
// failure when the command itself succeeded: an answer or a listing lost
// to a full disk is one sentence and exit 1, not a quiet exit 0.
type outWriter struct {
	mu  sync.Mutex
	err error
}

// outFile is the file w writes to, seen through an outWriter, for what
// asks the terminal (its width); false when w is no file.
func outFile(w io.Writer) (*os.File, bool) {
	if _, ok := w.(*outWriter); ok {
		return os.Stdout, true
	}
	f, ok := w.(*os.File)
	return f, ok
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

// stdout is where a command prints: the invocation's outWriter, or
// os.Stdout itself for a cli made without Main (tests).
func (c *cli) stdout() io.Writer {
	if c.out == nil {
		return os.Stdout
	}
	return c.out
}

// oneShotFace is NewOneShot printing to the invocation's standard output
// (stdout), so that Main sees a write of its answer that failed.
func (c *cli) oneShotFace(format string) (*OneShot, int) {
	face, code := NewOneShot(format, c.term)
	face.Stdout = c.stdout()
	return face, code
}
