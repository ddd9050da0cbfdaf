package rootfs

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/afero"
)

// ErrNotRegular says a file ralph reads as text is a directory, a device
// or a pipe.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge says a file ralph reads whole is larger than its limit.
var ErrTooLarge = errors.New("larger than ralph reads")

// ReadSmall reads name through fsys whole, for the prompt files people
// bring from other agents (custom commands, agent definitions): a file
// that is not regular is ErrNotRegular, one over limit bytes ErrTooLarge,
// and through a project's door a link out of it fails with ErrLinkOut
// before anything is read.
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
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w (%d KiB)", name, ErrTooLarge, limit>>10)
	}
	return data, nil
}
