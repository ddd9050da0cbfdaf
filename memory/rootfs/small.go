package rootfs

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/text"
)

// ErrNotRegular says a file ralph reads as text is a directory, a device
// or a pipe.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge says a file ralph reads whole is larger than its limit.
var ErrTooLarge = errors.New("larger than ralph reads")

// TooLargeError is a file over the limit ralph reads of it, said in one
// sentence that names the file, its size and the limit. It is ErrTooLarge
// to errors.Is. The faces print it alone, whatever wraps it, since what
// the person must do (shrink or move the file) does not depend on which
// command met it.
type TooLargeError struct {
	Name  string
	Size  int64 // at least Limit+1: what was read when the size was unknown
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %s, more than the %s ralph reads of such a file, so ralph left it as it is",
		e.Name, text.Size(e.Size), text.Size(e.Limit))
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// ReadSmall reads name through fsys whole, for the files ralph reads
// whole (its state files, and the prompt files people bring from other
// agents: custom commands, agent definitions): a file that is not regular
// is ErrNotRegular, one over limit bytes a *TooLargeError, found from its
// size before a byte is read, and through a project's door a link out of
// it fails with ErrLinkOut before anything is read.
func ReadSmall(fsys afero.Fs, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", name, ErrNotRegular)
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Name: name, Size: fi.Size(), Limit: limit}
	}
	return readAtMost(f, name, limit)
}

// readAtMost reads r to its end, or fails with a *TooLargeError past
// limit bytes: a file may grow after its size was looked at.
func readAtMost(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}
