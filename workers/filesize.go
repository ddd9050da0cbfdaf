package workers

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ralph-dev/ralph/memory/text"
)

// MaxEditFile bounds the text the file tools hold whole: a file that
// edit_file or apply_patch reads to change it, and the content that
// write_file, edit_file and apply_patch write. A model can make a file of
// any size for free (truncate -s 3G makes a sparse one) or grow one in a
// single small call (replace_all edits of "a" by "aaaaaaaaaa"), and
// holding it whole would take ralph's memory several times over. 16 MiB
// is far more than source a person edits by hand (read_file pages a
// file, so it needs no such bound); a larger file is for run_command
// (sed, a script), which streams it.
const MaxEditFile = 16 << 20

// ErrFileTooLarge is wrapped by a SizeError.
var ErrFileTooLarge = errors.New("file too large for the file tools")

// SizeError is a file, or content for one, above MaxEditFile. Wrote is
// true when it is content to be written, false when it is a file to be
// read; Size is its size in bytes (for a file that grew while it was
// read, what was read of it).
type SizeError struct {
	Size  int64
	Wrote bool
}

func (e *SizeError) Error() string {
	what := "file"
	if e.Wrote {
		what = "content"
	}
	return fmt.Sprintf("%s of %s, more than the %s the file tools hold", what, text.Size(e.Size), text.Size(MaxEditFile))
}

func (e *SizeError) Unwrap() error { return ErrFileTooLarge }

// readRegular reads the open file f as the file tools read one (what
// Target.Read does on every platform once the file is open): nothing but
// a regular file (ErrNotRegular), through readBounded.
func readRegular(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	return readBounded(f, fi)
}

// readBounded reads f, whose stat is fi, refusing it before it is read
// when its size (a sparse file's too) is above MaxEditFile, and reading
// no more than one byte past the bound, so a file that grows while it is
// read is refused as well without being held.
func readBounded(f *os.File, fi os.FileInfo) ([]byte, error) {
	if fi.Size() > MaxEditFile {
		return nil, &SizeError{Size: fi.Size()}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEditFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxEditFile {
		return nil, &SizeError{Size: int64(len(data))}
	}
	return data, nil
}

// CheckWriteSize is the refusal of content above MaxEditFile, before
// anything is written; nil when it fits.
func CheckWriteSize(n int) error {
	if n > MaxEditFile {
		return &SizeError{Size: int64(n), Wrote: true}
	}
	return nil
}
