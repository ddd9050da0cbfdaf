package memory

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

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

// DiskFullError is a full file system, explained.
type DiskFullError struct {
	Dir    string // the directory ralph was writing under
	Mount  string // where its file system is mounted, "" when unknown
	FSType string // the file system's type, "" when unknown
	Free   int64  // bytes free to ralph's user, -1 when unknown
	Size   int64  // the file system's size, -1 when unknown
	Err    error  // what failed
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
// err (nil when only its free space said so).
func DiskFull(dir string, err error) *DiskFullError {
	if err == nil {
		err = errors.New("less than " + text.Size(LowSpace) + " free")
	}
	if abs, aerr := filepath.Abs(dir); aerr == nil {
		dir = abs
	}
	e := &DiskFullError{Dir: dir, Free: -1, Size: -1, Err: err}
	if free, size, serr := DiskSpace(dir); serr == nil {
		e.Free, e.Size = free, size
	}
	e.Mount, e.FSType = mountOf(dir)
	return e
}

// DiskLow reports whether the file system that holds dir has less than
// LowSpace free. It answers false when it cannot tell.
func DiskLow(dir string) bool {
	free, _, err := DiskSpace(dir)
	return err == nil && free < LowSpace
}
