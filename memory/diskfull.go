package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ralph-dev/ralph/memory/text"
)

// A full disk (or an exhausted quota) is no failure of the task at hand:
// nothing ralph or the model does succeeds until someone frees space, and
// a run left overnight must not spend its attempts and trip its breaker
// on it. So the error is recognised wherever it surfaces — a state file's
// write, git's own message, a tool's result — and said once, in a sentence
// that names the file system and the space left; the task loop waits for
// space instead of counting the attempt.

// ErrDiskFull is what a DiskFullError is, for callers that branch on it.
var ErrDiskFull = errors.New("the disk is full")

// LowSpace is how little free space counts as a full disk when no error
// said so: below it, git cannot write a checkpoint's objects, nor ralph a
// session record, for long.
const LowSpace = 1 << 20

// DiskFullError is a full file system, or a quota used up, explained.
type DiskFullError struct {
	Dir    string // the directory ralph was writing under
	Mount  string // where its file system is mounted, "" when unknown
	FSType string // the file system's type, "" when unknown
	Free   int64  // bytes free to ralph's user, -1 when unknown
	Size   int64  // the file system's size, -1 when unknown
	// Quota says the user's quota is used up (EDQUOT), not the file
	// system: its free space is no cause then, and is not said.
	Quota bool
	Err   error // what failed
}

func (e *DiskFullError) Error() string {
	where := e.Dir
	if e.Mount != "" && e.Mount != e.Dir {
		where += " (on " + e.Mount
		if e.FSType != "" {
			where += ", " + e.FSType
		}
		where += ")"
	} else if e.FSType != "" {
		where += " (" + e.FSType + ")"
	}
	if e.Quota {
		return "you are over quota on the file system of " + where
	}
	space := "no space left"
	if e.Free >= 0 && e.Size > 0 {
		space = text.Size(e.Free) + " free of " + text.Size(e.Size)
	} else if e.Free >= 0 {
		space = text.Size(e.Free) + " free"
	}
	return fmt.Sprintf("the file system of %s is full (%s)", where, space)
}

func (e *DiskFullError) Unwrap() []error { return []error{ErrDiskFull, e.Err} }

// fullMessages are the words programs ralph runs (git above all) use for a
// full disk in their own messages, where no errno survives.
var fullMessages = []string{"no space left on device", "out of diskspace", "disk quota exceeded", "not enough space on the disk"}

// IsDiskFull reports whether err says a file system ran out of space or
// quota: an errno in its chain, or the words a program printed for it.
func IsDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrDiskFull) || isFullErrno(err) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, m := range fullMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// ExplainDiskFull returns err as a DiskFullError of the file system that
// holds dir when err is a full disk, and err itself otherwise.
func ExplainDiskFull(err error, dir string) error {
	var done *DiskFullError
	if !IsDiskFull(err) || errors.As(err, &done) {
		return err
	}
	return DiskFull(dir, err)
}

// DiskFull describes the file system that holds dir, as full because of
// err (nil when only its free space said so), or as over quota when err
// says that. When err names the file that failed and it is on another file
// system (or dir is ""), that file's directory is described instead.
func DiskFull(dir string, err error) *DiskFullError {
	if err == nil {
		err = errors.New("less than " + text.Size(LowSpace) + " free")
	}
	var mount, fstype string
	if dir != "" {
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			dir = abs
		}
		mount, fstype = mountOf(dir)
	}
	// The file that failed may live on another file system than dir (a
	// session's record on its own mount, dir unknown): the one described
	// is the file's, whose space is what ran out.
	if p := failedPath(err); p != "" && filepath.IsAbs(p) {
		if fdir := existingDir(filepath.Dir(p)); fdir != "" {
			if m, t := mountOf(fdir); dir == "" || m != mount || m == "" {
				dir, mount, fstype = fdir, m, t
			}
		}
	}
	e := &DiskFullError{Dir: dir, Free: -1, Size: -1, Err: err, Quota: isQuota(err)}
	if free, size, serr := DiskSpace(dir); serr == nil {
		e.Free, e.Size = free, size
	}
	e.Mount, e.FSType = mount, fstype
	return e
}

// existingDir is dir, or the nearest directory above it that exists ("" for
// none): a file that could not be written may be in a directory not made
// yet, whose file system is its parent's.
func existingDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// isQuota reports whether err is a quota used up rather than a full file
// system: EDQUOT in its chain, or a program's words for it.
func isQuota(err error) bool {
	var full *DiskFullError
	if errors.As(err, &full) {
		return full.Quota
	}
	return isQuotaErrno(err) || strings.Contains(strings.ToLower(err.Error()), "disk quota exceeded")
}

// IOError is an I/O error (EIO) on a file ralph wrote: the disk or the
// file system under it failed. It is no full disk: waiting for space
// would not mend it.
type IOError struct {
	Path string // the file, as ralph named it
	Err  error
}

func (e *IOError) Error() string {
	return "an I/O error on " + e.Path + " (the disk or its file system failed)"
}

func (e *IOError) Unwrap() error { return e.Err }

// IsDiskError reports whether err is a failure of the disk rather than of
// ralph or the task: a full file system or quota (IsDiskFull) or an I/O
// error on a file (not on a connection, whose EIO is the network's).
func IsDiskError(err error) bool {
	var ioe *IOError
	return IsDiskFull(err) || errors.As(err, &ioe) || isIOErrno(err) && failedPath(err) != ""
}

// ExplainDisk is err in one sentence when the disk is its cause: a full
// file system with the space left in it, a quota used up, an I/O error
// naming the file (see IsDiskError); err itself otherwise. dir is where
// ralph was writing, whose file system is described. The sentence keeps
// err in its chain for callers, not in its words.
func ExplainDisk(err error, dir string) error {
	var ioe *IOError
	switch {
	case err == nil:
		return nil
	case IsDiskFull(err):
		var full *DiskFullError
		if errors.As(err, &full) {
			return full
		}
		return DiskFull(dir, err)
	case errors.As(err, &ioe):
		return ioe
	case isIOErrno(err) && failedPath(err) != "":
		return &IOError{Path: failedPath(err), Err: err}
	}
	return err
}

// failedPath is the file a failed write names: the outermost FileError's,
// else the system call's.
func failedPath(err error) string {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe.Path
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.New
	}
	return ""
}

// FileError is a file ralph could not write: what it was doing (Op:
// "save" for a file replaced whole, "append to", "create"), the file, and
// why. Its message says the cause in words, not the chain of system calls
// under it (a failed rename of a temporary file is no news to a person);
// Unwrap keeps the chain for callers.
type FileError struct {
	Op   string
	Path string
	Err  error
}

func (e *FileError) Error() string { return "could not " + e.Op + " " + e.Path + ": " + Cause(e.Err) }

func (e *FileError) Unwrap() error { return e.Err }

// Cause is why a file operation failed, in words: the system's words for
// its error number ("no space left on device", "an I/O error", "permission
// denied") without the calls and paths around it, or err's own text when
// it carries none.
func Cause(err error) string {
	if err == nil {
		return ""
	}
	var fe *FileError
	if errors.As(err, &fe) {
		return Cause(fe.Err)
	}
	if isIOErrno(err) {
		return "an I/O error"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Cause(pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return Cause(le.Err)
	}
	return err.Error()
}

// DiskLow reports whether the file system that holds dir has less than
// LowSpace free. It answers false when it cannot tell.
func DiskLow(dir string) bool {
	free, _, err := DiskSpace(dir)
	return err == nil && free < LowSpace
}
