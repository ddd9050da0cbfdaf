package memory

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/spf13/afero"
)

// The lock file's content names its holder for people (ralph status), but
// a command can write that file (the fallback sandbox makes .ralph/
// writable), so the pid in it is the model's choice: --force once sent
// SIGTERM and SIGKILL to whichever of the person's processes the model
// named there. LockHolder finds the holder through the lock itself, as
// the kernel keeps it, and --force signals nothing else.

// ErrNoHolder says no process on this machine could be shown to hold the
// project's lock: it was let go meanwhile, it is held from another host
// (a network file system), or by a process that no longer has the file
// open (a child that inherited the locked descriptor), which ralph will
// not guess at.
var ErrNoHolder = errors.New("no process on this machine can be shown to hold the lock")

// ErrHolderUnknown says this system does not tell which process holds a
// lock (only Linux does, in /proc/locks), so --force signals nothing.
var ErrHolderUnknown = errors.New("this system does not tell which process holds a lock")

// NotRalphError is a lock held by a process that is not a ralph: --force
// stops only a ralph.
type NotRalphError struct {
	PID int
	Exe string
}

func (e *NotRalphError) Error() string {
	return fmt.Sprintf("the process holding the lock (pid %d, %s) is not a ralph", e.PID, e.Exe)
}

// Holder is the process that holds a project's lock, found through the
// lock (LockHolder) and held so that a signal reaches that process and no
// other that took its pid since. Close it when done.
type Holder struct {
	PID int
	Exe string // its executable, as the system names it
	h   holderHandle
}

// LockHolder finds the process that holds the flock on root's lock file:
// the kernel's record of the lock names it (Linux: /proc/locks, matched by
// the file's inode), the process must have the lock file open itself
// (its /proc/<pid>/fd, matched by device and inode), it is pinned before
// it is looked at (a pidfd, so that a signal can only reach it), and it
// must be a ralph: this program, or one whose executable is named ralph
// (a ralph of another version). It never reads the pid the file says.
// The error is ErrNoHolder, a *NotRalphError, ErrHolderUnknown on systems
// that do not say, or what opening the lock file met.
func LockHolder(fs afero.Fs, root string) (*Holder, error) {
	f, err := fs.Open(filepath.Join(root, LockFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return lockHolder(fi)
}

// Signal sends sig to the holder, and only to it: ESRCH once it is gone.
func (h *Holder) Signal(sig syscall.Signal) error { return h.h.signal(h.PID, sig) }

// Close lets the holder go.
func (h *Holder) Close() { h.h.close() }
