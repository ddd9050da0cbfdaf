package takeover

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// How long --force waits for a live holder on this host to leave after
// SIGTERM (it saves its state and exits) and then after SIGKILL.
var (
	termGrace = 10 * time.Second
	killGrace = 5 * time.Second
)

// Acquire takes the project lock, saying so when the lock file had to be
// made anew (memory.Lock.Recreated). With force, a live ralph on this host
// is stopped first — SIGTERM, a grace period to save, then SIGKILL — and
// the lock is taken only once it is gone, so there are never two writers;
// a holder on another host, which cannot be signalled, is displaced.
//
// The ralph stopped is the one the lock itself shows (memory.LockHolder:
// the kernel's record of the flock, the process holding the file open, a
// ralph's executable), never the pid the lock file names: a command can
// write that file (the fallback sandbox makes .ralph/ writable), and the
// model would choose which of the person's processes dies. Where the
// holder cannot be shown (not Linux, a holder that no longer has the file
// open, a process that is no ralph) --force stops nothing and says why in
// one sentence.
func Acquire(fs afero.Fs, root string, force bool, notify func(string), secrets ...string) (*memory.Lock, error) {
	lock, err := memory.AcquireLock(fs, root, "", false, secrets...)
	var le *memory.LockedError
	if force && errors.As(err, &le) {
		lock, err = forceOut(fs, root, le, notify, secrets)
	}
	if err == nil {
		if s := lock.Recreated(); s != "" {
			notify(s)
		}
	}
	return lock, err
}

// forceOut stops the holder le met, or displaces one on another host.
func forceOut(fs afero.Fs, root string, le *memory.LockedError, notify func(string), secrets []string) (*memory.Lock, error) {
	holder, herr := memory.LockHolder(fs, root)
	switch {
	case herr == nil:
		defer holder.Close()
		if holder.PID == os.Getpid() {
			return memory.AcquireLock(fs, root, "", true, secrets...)
		}
		return stop(fs, root, holder, notify, secrets)
	case errors.Is(herr, memory.ErrNoHolder):
		// Let go meanwhile, or held from another host, whose holder no
		// signal reaches: displaced, as the lock file's host says.
		lock, err := memory.AcquireLock(fs, root, "", false, secrets...)
		if !errors.As(err, &le) {
			return lock, err
		}
		if le.Foreign {
			return memory.AcquireLock(fs, root, "", true, secrets...)
		}
		return nil, &forceRefused{le, "--force: no process on this machine can be shown to hold this project's lock " +
			"(the pid its file names, " + namedPID(le) + ", is not proof: commands can write that file), so ralph stops nothing; " +
			"stop the ralph working here yourself, then run again"}
	case errors.Is(herr, memory.ErrHolderUnknown):
		return nil, &forceRefused{le, "--force: this system does not tell which process holds a lock, and the pid the lock file names (" +
			namedPID(le) + ") is not proof, since commands can write that file, so ralph stops nothing; " +
			"stop the ralph working here yourself, then run again"}
	}
	var nr *memory.NotRalphError
	if errors.As(herr, &nr) {
		return nil, &forceRefused{le, fmt.Sprintf("--force: this project's lock is held by pid %d (%s), which is not a ralph, so ralph stops nothing; end that process yourself if it should not hold the lock", nr.PID, nr.Exe)}
	}
	return nil, fmt.Errorf("--force: cannot tell who holds this project's lock: %w", herr)
}

// stop ends holder, a ralph shown to hold the lock, SIGTERM first, and
// takes the lock once it is gone.
func stop(fs afero.Fs, root string, holder *memory.Holder, notify func(string), secrets []string) (*memory.Lock, error) {
	pid := holder.PID
	for _, step := range []struct {
		sig   syscall.Signal
		grace time.Duration
	}{{syscall.SIGTERM, termGrace}, {syscall.SIGKILL, killGrace}} {
		if err := holder.Signal(step.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("--force: cannot stop the ralph (pid %d) holding this project: %w", pid, err)
		}
		deadline := time.Now().Add(step.grace)
		for time.Now().Before(deadline) {
			lock, err := memory.AcquireLock(fs, root, "", false, secrets...)
			var le *memory.LockedError
			if !errors.As(err, &le) {
				if err == nil {
					notify(fmt.Sprintf("--force: stopped the ralph (pid %d) that held this project (%s) and took it over", pid, step.sig))
				}
				return lock, err
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil, fmt.Errorf("--force: the ralph (pid %d) holding this project did not stop after SIGTERM and SIGKILL", pid)
}

// namedPID is the pid the lock file names, in words.
func namedPID(le *memory.LockedError) string {
	if le.Holder.PID <= 0 {
		return "none"
	}
	return fmt.Sprint(le.Holder.PID)
}

// forceRefused is --force declining to stop anything, in one sentence;
// it is the LockedError underneath to errors.As and errors.Is (exit 3).
type forceRefused struct {
	locked *memory.LockedError
	msg    string
}

func (e *forceRefused) Error() string { return e.msg }
func (e *forceRefused) Unwrap() error { return e.locked }
