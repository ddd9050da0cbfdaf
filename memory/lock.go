package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// LockFile is the project lock. Its owner is whoever holds an exclusive
// flock(2) on the open file; its content only describes that owner to
// people and to `ralph status`. The kernel drops the flock when the owner
// dies, however it dies, so a crashed ralph never blocks the project.
const LockFile = ".ralph/session.lock"

// ErrLocked is matched (errors.Is) by every *LockedError.
var ErrLocked = errors.New("project is locked by another ralph")

// ErrNotWritable is matched (errors.Is) by the error of a project whose
// .ralph/ ralph may not write to (a read-only directory or file system):
// bad input, exit 2, said in one sentence rather than as a chain of
// system calls.
var ErrNotWritable = errors.New("the project is not writable")

// NotWritableError is a project ralph may not write its state to.
type NotWritableError struct {
	Dir string // the directory ralph could not write to
	Err error  // the error underneath, for errors.Is and the reason
}

func (e *NotWritableError) Error() string {
	reason := "permission denied"
	if errors.Is(e.Err, syscall.EROFS) {
		reason = "read-only file system"
	}
	return fmt.Sprintf("cannot write to %s (%s): ralph keeps its state there, so run it in a project directory you may write to",
		e.Dir, reason)
}

// Is makes errors.Is(err, ErrNotWritable) true for a *NotWritableError.
func (e *NotWritableError) Is(target error) bool { return target == ErrNotWritable }

func (e *NotWritableError) Unwrap() error { return e.Err }

// NotWritable turns a write refused in dir into a *NotWritableError, and
// leaves any other error as it is.
func NotWritable(dir string, err error) error {
	if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return &NotWritableError{Dir: dir, Err: err}
	}
	return err
}

// errWouldBlock is what tryFlock returns when another open file
// description holds a conflicting flock.
var errWouldBlock = errors.New("flock is held elsewhere")

// LockedError says who holds the project. Foreign is set when the holder
// runs on another host, where ralph cannot tell whether it is still alive.
type LockedError struct {
	Holder  LockInfo
	Foreign bool
}

func (e *LockedError) Error() string {
	h := e.Holder
	what := ""
	if h.SessionID != "" {
		what = "session " + h.SessionID
	}
	desc := e.who(what)
	if e.Foreign {
		return desc + " on host " + h.Hostname + " holds this project's lock; if it is gone, rerun with --force"
	}
	return desc + " is working in this project; wait for it to finish or stop it"
}

// Who names the holder as a chat that wants the project back says it:
// "another ralph (pid 4242, `ralph fix the tests`, started 3s ago)".
func (e *LockedError) Who() string {
	c := e.Holder.Command
	if c != "" {
		c = "`" + c + "`"
	}
	return e.who(c)
}

// who is "another ralph" and what the lock file says of it: its pid,
// what (a session, a command line), and since when.
func (e *LockedError) who(what string) string {
	h := e.Holder
	var who []string
	if h.PID > 0 {
		who = append(who, fmt.Sprintf("pid %d", h.PID))
	}
	if what != "" {
		who = append(who, what)
	}
	if !h.AcquiredAt.IsZero() {
		who = append(who, "started "+ago(time.Since(h.AcquiredAt)))
	}
	desc := "another ralph"
	if len(who) > 0 {
		desc += " (" + strings.Join(who, ", ") + ")"
	}
	return desc
}

// Is makes errors.Is(err, ErrLocked) true for a *LockedError.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// ago renders an age the way people say it: "40s ago", "3m ago", "2h5m ago".
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", max(int(d/time.Second), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm ago", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}

// Lock is a held project lock. Keep it while the process works and call
// Release on every exit path; a crash releases it anyway. A chat releases
// it while it waits at its prompt and takes it back (Reacquire).
type Lock struct {
	mu       sync.Mutex
	fs       afero.Fs
	path     string
	f        afero.File // the flocked file; nil on filesystems without flock
	fd       uintptr
	info     LockInfo
	prev     LockInfo
	hasPrev  bool
	forced   bool
	released bool
	// stateDir closes once the .gitignore this acquisition wrote into a
	// new .ralph/ is durable, or could not be made so (stateDirErr).
	stateDir    chan struct{}
	stateDirErr error
	// recreated says why this acquisition made the lock file anew (see
	// acquirer.recreate); "" when it did not.
	recreated string
}

// Recreated is the sentence saying why this acquisition made the lock
// file anew, for the person: a command had given it a second name, or
// put something that is not a regular file in its place. "" when the
// file was ralph's own.
func (l *Lock) Recreated() string { return l.recreated }

// StateDirDurable waits until the .gitignore AcquireLock wrote into the
// .ralph/ it made is durable, and returns the error that kept it from
// being so; at once when it wrote none. A new session waits for it before
// it is recorded (CreateOptions.After), so that no crash of the machine
// leaves a recorded session in a .ralph/ git would show.
func (l *Lock) StateDirDurable() error {
	if l == nil || l.stateDir == nil {
		return nil
	}
	<-l.stateDir
	return l.stateDirErr
}

// heldLocks keeps every held Lock reachable, so the *os.File inside is
// never finalized (which would close the descriptor and silently drop the
// flock) even if a caller loses its reference without calling Release.
var heldLocks sync.Map

// fder is implemented by files backed by a kernel descriptor (*os.File).
type fder interface{ Fd() uintptr }

// lockAttempts bounds the retries when the lock file is unlinked or
// replaced between our open and our flock; each retry means another ralph
// made progress, so a handful is plenty.
const lockAttempts = 20

// AcquireLock makes this process the owner of the project at root, or
// returns a *LockedError naming the owner. force takes the lock from a
// holder on another host, and from a live local holder (a hung ralph) by
// renaming a fresh lock file over the old one: the old process keeps a
// flock on an inode nobody looks at any more and should be stopped.
// secrets are redacted from the command line the lock file shows, where a
// prompt given as an argument may hold the API key.
func AcquireLock(fs afero.Fs, root string, sessionID string, force bool, secrets ...string) (*Lock, error) {
	path := filepath.Join(root, LockFile)
	// The lock is the first thing ralph writes in a project, so this is
	// where .ralph/ and its .gitignore come into being, and where a
	// project ralph may not write to is found. The .gitignore is made
	// durable beside what follows (StateDirDurable): its fsync cost a
	// millisecond of every first run on the way to the first request,
	// and many on a busy disk.
	written, err := ensureStateDir(fs, root)
	if err != nil {
		return nil, NotWritable(filepath.Join(root, StateDir), fmt.Errorf("lock %s: %w", path, err))
	}
	me := selfInfo(sessionID)
	me.Command = commandText(NewRedactor(secrets...))
	a := &acquirer{fs: fs, path: path, me: me, force: force}
	l, err := a.acquire()
	if err != nil {
		if written != "" {
			_ = syncStateDir(fs, written)
		}
		return nil, err
	}
	l.prev, l.hasPrev, l.forced = a.prev, a.hasPrev, a.forced
	l.recreated = a.recreated
	l.stateDir = make(chan struct{})
	if written == "" {
		close(l.stateDir)
	} else {
		go func() {
			defer close(l.stateDir)
			l.stateDirErr = syncStateDir(fs, written)
		}()
	}
	heldLocks.Store(l, struct{}{})
	return l, nil
}

// acquire makes the attempts of one acquisition, retrying while the lock
// file changes under it.
func (a *acquirer) acquire() (*Lock, error) {
	for range lockAttempts {
		l, retry, err := a.try()
		if err != nil {
			return nil, NotWritable(filepath.Dir(a.path), err)
		}
		if !retry {
			return l, nil
		}
	}
	return nil, fmt.Errorf("lock %s: the lock file kept changing under us; gave up after %d attempts", a.path, lockAttempts)
}

// Reacquire takes back a lock this process released, as AcquireLock
// without force would, for the same session and command line: a chat lets
// the project go while it waits at its prompt and takes it back when the
// person asks for work. It returns a *LockedError naming the holder when
// another ralph took the project meanwhile. The Lock stays the same value,
// so its holders need not learn of a new one; it is a no-op while held.
// Previous then names the holder it found gone meanwhile, if any: a ralph
// that crashed while it had the project.
func (l *Lock) Reacquire() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.released {
		return nil
	}
	me := selfInfo(l.info.SessionID)
	me.Command = l.info.Command
	a := &acquirer{fs: l.fs, path: l.path, me: me}
	if err := EnsureStateDir(l.fs, filepath.Dir(filepath.Dir(l.path))); err != nil {
		return NotWritable(filepath.Dir(l.path), fmt.Errorf("lock %s: %w", l.path, err))
	}
	n, err := a.acquire()
	if err != nil {
		return err
	}
	l.f, l.fd, l.info, l.released = n.f, n.fd, n.info, false
	l.prev, l.hasPrev, l.forced = a.prev, a.hasPrev, false
	heldLocks.Store(l, struct{}{})
	return nil
}

// acquirer carries one AcquireLock call's state across its retries.
type acquirer struct {
	fs      afero.Fs
	path    string
	me      LockInfo
	force   bool
	prev    LockInfo
	hasPrev bool
	forced  bool
	// recreated says why the lock file was made anew (recreate).
	recreated string
}

func (a *acquirer) remember(prev LockInfo, forced bool) {
	a.prev, a.hasPrev = prev, true
	a.forced = a.forced || forced
}

// try makes one attempt; retry says the file changed under us.
func (a *acquirer) try() (l *Lock, retry bool, err error) {
	if !hasDescriptors(a.fs, filepath.Dir(a.path)) {
		return a.tryWithoutFlock()
	}
	f, created, err := openLockFile(a.fs, a.path)
	if errors.Is(err, rootfs.ErrHardLink) || errors.Is(err, rootfs.ErrNotRegular) {
		return a.recreate(err)
	}
	if err != nil {
		return nil, false, err
	}
	if testHookAfterOpen != nil {
		testHookAfterOpen()
	}
	d, ok := f.(fder)
	if !ok {
		// Directories with descriptors but files without: O_EXCL
		// creation is all the locking this filesystem offers.
		if created {
			return a.ownCreated(f)
		}
		_ = f.Close()
		return a.tryWithoutFlock()
	}
	fd := d.Fd()
	switch err := flockPatiently(fd); {
	case errors.Is(err, errWouldBlock):
		holder, _ := readInfo(f)
		_ = f.Close()
		if !a.force {
			return nil, false, &LockedError{Holder: holder, Foreign: isForeign(holder, a.me)}
		}
		a.remember(holder, true)
		l, err := a.takeOver()
		return l, false, err
	case err != nil:
		// The filesystem has no working flock (some network mounts):
		// fall back to O_EXCL plus pid and start-time checks, in which
		// our exclusive creation of the file already won.
		if created {
			return a.ownCreated(f)
		}
		_ = f.Close()
		return a.tryWithoutFlock()
	}
	if !sameFile(a.fs, a.path, f) {
		// The owner released (unlinked) the file, or a forced takeover
		// replaced it, between our open and our flock: our lock is on
		// an inode nobody else will look at.
		closeLocked(f, fd)
		return nil, true, nil
	}
	if !created {
		if prev, ok := readInfo(f); ok {
			if isForeign(prev, a.me) && !a.force {
				// flock may not be enforced across hosts on a
				// network filesystem, so its success proves nothing.
				closeLocked(f, fd)
				return nil, false, &LockedError{Holder: prev, Foreign: true}
			}
			a.remember(prev, isForeign(prev, a.me))
		}
	}
	if err := writeInfo(f, a.me); err != nil {
		closeLocked(f, fd)
		return nil, false, fmt.Errorf("lock %s: %w", a.path, err)
	}
	return &Lock{fs: a.fs, path: a.path, f: f, fd: fd, info: a.me}, false, nil
}

// takeOver replaces a live holder's file with a new, already flocked one,
// so that from the rename on every newcomer meets our flock.
func (a *acquirer) takeOver() (*Lock, error) {
	dir := filepath.Dir(a.path)
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.takeover-%d-%d", filepath.Base(a.path), a.me.PID, time.Now().UnixNano()))
	f, err := a.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("take over %s: %w", a.path, err)
	}
	d, ok := f.(fder)
	if !ok {
		_ = f.Close()
		_ = a.fs.Remove(tmp)
		return nil, fmt.Errorf("take over %s: the filesystem gives no file descriptor", a.path)
	}
	fd := d.Fd()
	err = tryFlock(fd, true)
	if err == nil {
		err = writeInfo(f, a.me)
	}
	if err == nil {
		err = replace(a.fs, tmp, a.path)
	}
	if err != nil {
		closeLocked(f, fd)
		_ = a.fs.Remove(tmp)
		return nil, fmt.Errorf("take over %s: %w", a.path, err)
	}
	syncDir(a.fs, dir)
	return &Lock{fs: a.fs, path: a.path, f: f, fd: fd, info: a.me}, nil
}

// noFlockMu serializes this process's fallback lock operations, because
// afero.MemMapFs checks and creates in two steps, so its O_EXCL alone does
// not stop two goroutines from both creating the file.
var noFlockMu sync.Mutex

// testHookAfterOpen, when set by a test, runs between opening the lock
// file and flocking it: the window in which the file can be replaced.
var testHookAfterOpen func()

// tryWithoutFlock is the fallback for filesystems without descriptors or
// flock (afero.MemMapFs in tests): whoever creates the file with O_EXCL
// owns it, and a file whose holder is provably dead is removed and the
// creation retried. Two processes clearing the same stale file at once
// could both win, a race only flock closes.
func (a *acquirer) tryWithoutFlock() (*Lock, bool, error) {
	noFlockMu.Lock()
	defer noFlockMu.Unlock()
	f, err := a.fs.OpenFile(a.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		return a.ownCreated(f)
	}
	if !errors.Is(err, os.ErrExist) {
		return nil, false, fmt.Errorf("lock %s: %w", a.path, err)
	}
	holder, ok := readInfoSettled(a.fs, a.path)
	if ok {
		switch classify(holder, a.me, false) {
		case LockHeld:
			if !a.force {
				return nil, false, &LockedError{Holder: holder}
			}
			a.remember(holder, true)
		case LockForeign:
			if !a.force {
				return nil, false, &LockedError{Holder: holder, Foreign: true}
			}
			a.remember(holder, true)
		default:
			a.remember(holder, false)
		}
	}
	if err := a.fs.Remove(a.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("lock %s: remove stale lock: %w", a.path, err)
	}
	return nil, true, nil
}

// ownCreated completes a fallback acquisition: f was created with O_EXCL
// by this call, so it is ours once it describes us.
func (a *acquirer) ownCreated(f afero.File) (*Lock, bool, error) {
	werr := writeInfo(f, a.me)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = a.fs.Remove(a.path)
		return nil, false, fmt.Errorf("lock %s: %w", a.path, err)
	}
	return &Lock{fs: a.fs, path: a.path, info: a.me}, false, nil
}

// Info returns what the lock file says about us.
func (l *Lock) Info() LockInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.info
}

// Previous returns the holder whose lock we replaced: a crashed ralph, or,
// when AcquireLock was forced, possibly a live or foreign one.
func (l *Lock) Previous() (LockInfo, bool) { return l.prev, l.hasPrev }

// Forced reports whether force displaced a holder that was alive or could
// not be checked (another host), as opposed to recovering a crashed one.
func (l *Lock) Forced() bool { return l.forced }

// SetSession records the session id in the lock file, once the caller
// knows it. It fails if a forced AcquireLock elsewhere took the lock over.
func (l *Lock) SetSession(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("lock %s: already released", l.path)
	}
	if l.f == nil {
		noFlockMu.Lock()
		defer noFlockMu.Unlock()
	}
	if !l.stillOurs() {
		return fmt.Errorf("lock %s: another ralph took this project over (--force)", l.path)
	}
	info := l.info
	info.SessionID = id
	var err error
	if l.f != nil {
		err = writeInfo(l.f, info)
	} else {
		err = WriteFileAtomic(l.fs, l.path, marshalInfo(info), 0o644)
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", l.path, err)
	}
	l.info = info
	return nil
}

// Release empties the lock file if it is still ours (removes it where
// there is no flock), then drops the flock.
// It is idempotent and safe from a signal handler's exit path: it only
// takes in-process mutexes, waits at most for the fsync of a .gitignore
// AcquireLock wrote, and never waits for another process.
func (l *Lock) Release() error {
	// The .gitignore's fsync is the Lock's: it ends before the lock does.
	_ = l.StateDirDurable()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	defer heldLocks.Delete(l)
	if l.f == nil {
		noFlockMu.Lock()
		defer noFlockMu.Unlock()
	}
	var err error
	// With flock the file stays, emptied before it is unlocked, for the
	// next ralph to lock: an empty lock file names no holder (ReadLock
	// says free, and the next acquisition finds no previous one), and a
	// newcomer that opened it meanwhile finds it empty after its flock.
	// Made and removed by every session, it was an inode made and freed
	// each time, and on a file system without a journal each new inode
	// searches past those freed in the last half-minute. Without flock
	// the file's existence is the lock, and it is removed. Neither is
	// fsynced: a holder a crash of the machine brings back is not alive,
	// and the next ralph takes it as stale.
	if l.stillOurs() {
		var rerr error
		if l.f != nil {
			rerr = l.f.Truncate(0)
		} else if rerr = l.fs.Remove(l.path); errors.Is(rerr, os.ErrNotExist) {
			rerr = nil
		}
		if rerr != nil {
			err = fmt.Errorf("release %s: %w", l.path, rerr)
		}
	}
	if l.f != nil {
		unflock(l.fd)
		if cerr := l.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("release %s: %w", l.path, cerr)
		}
	}
	return err
}

// stillOurs reports whether the path still names our lock: the same inode
// (flock) and our pid and acquisition time in it.
func (l *Lock) stillOurs() bool {
	if l.f != nil && !sameFile(l.fs, l.path, l.f) {
		return false
	}
	b, err := afero.ReadFile(l.fs, l.path)
	if err != nil {
		return false
	}
	info, ok := parseInfo(b)
	return ok && info.PID == l.info.PID && info.StartTime == l.info.StartTime &&
		info.AcquiredAt.Equal(l.info.AcquiredAt)
}
