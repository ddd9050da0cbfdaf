package rootfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/text"
)

// ErrNotRegular says a file ralph reads as text is a directory, a device
// or a pipe. Callers branch on it with errors.Is; the error itself is a
// *NotRegularError, which says which it was.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is a path ralph meant to read as a small file that is
// something else, said in one sentence that names it and what it is.
type NotRegularError struct {
	Name string
	Mode fs.FileMode
	// Write says ralph meant to write the file, not read it.
	Write bool
}

func (e *NotRegularError) Error() string {
	did := "read it"
	if e.Write {
		did = "write to it"
	}
	return fmt.Sprintf("%s is %s, not a regular file, so ralph did not %s", e.Name, kindOf(e.Mode), did)
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Kind names what the file is in words: "a named pipe (FIFO)", "a
// directory".
func (e *NotRegularError) Kind() string { return kindOf(e.Mode) }

// kindOf names a file that is not regular in words.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

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

// The small readers below are the one way ralph reads a small file it
// keeps or is handed (its state files, settings, prompt and instruction
// files, custom commands, agent definitions, skills, a pasted image).
// They all open the same way (OpenSmall): without blocking, so that a
// FIFO or a device put where a file was expected (after a directory was
// listed, say) cannot hang ralph, then they look at the open file and
// refuse anything that is not regular before a byte is read. Which links
// are followed is the door's (fsys's) rule, not theirs: through a
// project's door a link out of it fails with ErrLinkOut before anything
// is opened.

// ReadSmall reads name through fsys whole: a file that is not regular is
// a *NotRegularError (ErrNotRegular), one over limit bytes a
// *TooLargeError (ErrTooLarge), found from its size before a byte is
// read, or while reading if it grew.
func ReadSmall(fsys afero.Fs, name string, limit int64) ([]byte, error) {
	f, fi, err := OpenSmall(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &TooLargeError{Name: name, Size: fi.Size(), Limit: limit}
	}
	return readAtMost(f, name, limit, fi.Size())
}

// ReadSmallInto is ReadSmall into space's array (a new one when it is too
// small), with the open file's stat: for a caller that reads one large
// file again and again and keeps none of its bytes (the task file, which
// the loop reads at every step to compare with the parse it holds), so
// that each read does not leave half a megabyte for the collector. The
// bytes returned share space's array until it is used again.
func ReadSmallInto(fsys afero.Fs, name string, limit int64, space []byte) ([]byte, fs.FileInfo, error) {
	f, fi, err := OpenSmall(fsys, name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, nil, &TooLargeError{Name: name, Size: fi.Size(), Limit: limit}
	}
	data, err := readInto(f, name, limit, fi.Size(), space)
	if err != nil {
		return nil, nil, err
	}
	return data, fi, nil
}

// ReadHead reads at most limit bytes of name through fsys, opened as
// ReadSmall opens it, for the files ralph reads the start of and may cut
// (a SKILL.md's frontmatter and body, an instructions file, a marker
// file): what lies past limit is not an error, and a caller that must
// know the file held more asks for one byte over what it keeps.
func ReadHead(fsys afero.Fs, name string, limit int64) ([]byte, error) {
	f, _, err := OpenSmall(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// OpenSmall opens name for reading without blocking and returns it with
// its own stat (the open file's, so a file swapped after a look is seen
// as what was opened), or a *NotRegularError, closed, when it is not a
// regular file. It is for a caller that reads a small file other than
// from its start (a log's tail); the caller closes the file.
func OpenSmall(fsys afero.Fs, name string) (afero.File, fs.FileInfo, error) {
	f, err := openNonBlocking(fsys, name)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, &NotRegularError{Name: name, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// readAtMost reads r to its end, or fails with a *TooLargeError past
// limit bytes: a file may grow after its size was looked at. size is what
// the file's stat said: the buffer starts that large (and a little more,
// to see the end), rather than doubling its way up, which for a task file
// of ten thousand lines, read at every step of a run, was a dozen copies.
func readAtMost(r io.Reader, name string, limit, size int64) ([]byte, error) {
	return readInto(r, name, limit, size, nil)
}

// readInto is readAtMost into space's array when it is large enough.
func readInto(r io.Reader, name string, limit, size int64, space []byte) ([]byte, error) {
	buf := bytes.NewBuffer(space[:0])
	buf.Grow(int(min(max(size, 0), limit)) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// openNonBlocking opens name for reading through a door that reaches the
// disk without blocking, so that opening a FIFO does not wait for a
// writer. Any other file system (a test's in-memory one) has no FIFOs
// and is opened with Open, which is all its wrappers may have made
// their own; afero's MemMapFs would also take any flag but O_RDONLY for
// a write and touch the file's time when it is closed.
func openNonBlocking(fsys afero.Fs, name string) (afero.File, error) {
	if !IsReal(fsys) {
		return fsys.Open(name)
	}
	return fsys.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
