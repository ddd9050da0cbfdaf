package git

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/interrupts"
)

// Every git ralph runs is started through startWatched (or runWatched),
// which keeps it in one list for two reasons.
//
// A stop (SIGINT, SIGTERM, SIGHUP, the chat's hard stop) must end ralph
// promptly whatever git it waits on. The work that waits on a checkpoint
// (the run's end, its retake) runs under a context no stop ends, on
// purpose, so that what a stopped turn changed is still recorded; its git
// was bounded only by its own limit, ten minutes for a checkpoint. A git
// blocked on a file the model planted kept ralph alive through SIGTERM.
// Now a stop gives every running git stopGrace to end, which a healthy
// one needs a few milliseconds of, and then ends it; after a signal,
// which ends the process, a git started later gets what is left of that
// grace too, unless the face takes the signal back (interrupts.CarryOn:
// ralph run's Ctrl-C at a terminal goes on as the chat).
//
// And a git must not wait on a FIFO the model planted where git reads
// (.gitignore, .git/info/exclude, a nested repository's config): git's
// open of a FIFO blocks until some process writes it, that is forever.
// A watchdog (watch_linux.go) looks at a git that is still running
// after watchFirst and ends it as soon as the kernel shows it blocked on
// a FIFO, naming the file (SpecialFileError).

// stopGrace is how long a running git has to end after a stop before it
// is ended: long enough for a checkpoint of a healthy repository to be
// made, short enough that ralph ends within seconds of a signal.
const stopGrace = 2 * time.Second

// watchFirst is when the watchdog first looks at a git, and watchEvery how
// often it looks again. Most gits ralph runs end before watchFirst, and
// then cost one timer; a git blocked on a FIFO is ended within
// watchFirst+watchEvery.
var (
	watchFirst = 25 * time.Millisecond
	watchEvery = 50 * time.Millisecond
)

// errStopped is the cause of a git ended by a stop.
var errStopped = errors.New("ralph was stopped")

// SpecialFileError is a git ended because it was blocked on a FIFO (or
// another file that is not a regular one) at a place git reads: the
// model's command can plant one to hang ralph's own git.
type SpecialFileError struct {
	// Path is the file, relative to the directory git ran in where it
	// lies beneath it; "" when it could not be told.
	Path string
	Kind string // "FIFO"
}

func (e *SpecialFileError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("a %s in the project keeps git from reading it", e.Kind)
	}
	return fmt.Sprintf("a %s at %s keeps git from reading the project", e.Kind, e.Path)
}

// watch is one running git.
type watch struct {
	cmd   *exec.Cmd
	timer *time.Timer // the watchdog's next look

	mu    sync.Mutex
	ended bool
	cause error // why ralph ended it, nil when it did not
	stop  *time.Timer
}

var (
	watchMu sync.Mutex
	running = map[*watch]struct{}{}
	// endsBy is when every git must have ended since a signal, zero
	// before one: the process is on its way out.
	endsBy time.Time
)

func init() {
	interrupts.OnHardStop(func(it interrupts.Interrupt) { hurry(it.Signal != nil) })
	interrupts.OnCarryOn(unhurry)
}

// unhurry lifts the deadline a signal set for gits started later: the
// process did not end by it (interrupts.CarryOn). Gits already running
// keep the deadline they were given, as the stop was meant for them.
func unhurry() {
	watchMu.Lock()
	defer watchMu.Unlock()
	endsBy = time.Time{}
}

// hurry gives every running git stopGrace to end; sticky (a signal, which
// ends the process) holds gits started later to the same deadline.
func hurry(sticky bool) {
	deadline := time.Now().Add(stopGrace)
	watchMu.Lock()
	defer watchMu.Unlock()
	if sticky && (endsBy.IsZero() || deadline.Before(endsBy)) {
		endsBy = deadline
	}
	for w := range running {
		w.endAt(deadline, errStopped)
	}
}

// startWatched starts cmd and watches it until finishWatched.
func startWatched(cmd *exec.Cmd) (*watch, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &watch{cmd: cmd}
	watchMu.Lock()
	running[w] = struct{}{}
	deadline := endsBy
	watchMu.Unlock()
	if !deadline.IsZero() {
		w.endAt(deadline, errStopped)
	}
	if canWatch {
		// Set under the lock, which look takes before it reads the timer.
		w.mu.Lock()
		w.timer = time.AfterFunc(watchFirst, w.look)
		w.mu.Unlock()
	}
	return w, nil
}

// finishWatched waits for the git w watches and gives its error: the
// cause, when ralph ended it, in place of the signal that did.
func (w *watch) finish() error {
	err := w.cmd.Wait()
	w.mu.Lock()
	w.ended = true
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.stop != nil {
		w.stop.Stop()
	}
	cause := w.cause
	w.mu.Unlock()
	watchMu.Lock()
	delete(running, w)
	watchMu.Unlock()
	if cause != nil && err != nil {
		return cause
	}
	return err
}

// runWatched is cmd.Run through the watch.
func runWatched(cmd *exec.Cmd) error {
	w, err := startWatched(cmd)
	if err != nil {
		return err
	}
	return w.finish()
}

// outputWatched is cmd.Output through the watch; cmd.Stderr must be set.
func outputWatched(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	err := runWatched(cmd)
	return out.Bytes(), err
}

// endAt ends the git at t (at once when t has passed) with cause, unless
// it ends first or is already to end sooner.
func (w *watch) endAt(t time.Time, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.cause != nil {
		return
	}
	if w.stop != nil {
		w.stop.Stop()
	}
	w.stop = time.AfterFunc(time.Until(t), func() { w.end(cause) })
}

// end ends the git now with cause: SIGTERM first, on which git removes
// the lock files it holds (SIGKILL would leave them, and the next
// checkpoint would fail on them), then SIGKILL if it lingers.
func (w *watch) end(cause error) {
	w.mu.Lock()
	if w.ended || w.cause != nil {
		w.mu.Unlock()
		return
	}
	w.cause = cause
	w.mu.Unlock()
	_ = terminate(w.cmd.Process)
	time.AfterFunc(time.Second, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.ended {
			_ = w.cmd.Process.Kill()
		}
	})
}

// look is the watchdog's: it ends a git blocked on a special file.
func (w *watch) look() {
	w.mu.Lock()
	if w.ended || w.cause != nil {
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	if e := blockedOnSpecial(w.cmd.Process.Pid, w.cmd.Dir); e != nil {
		w.end(e)
		return
	}
	w.mu.Lock()
	if !w.ended {
		w.timer.Reset(watchEvery)
	}
	w.mu.Unlock()
}
