package images

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/text"
)

// ErrNotImage is a file that is none of the four formats (Sniff): what
// names it is left as text.
var ErrNotImage = errors.New("not an image")

// ErrNotRegular is a path that names a directory, a pipe or a device.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile is the image at path, a file the person named (a path pasted
// into their prompt), prepared as Prepare prepares one. It is read
// through fsys, the person's side of the file door (rootfs.Person), not
// a project's: the person may show the model a picture from anywhere,
// and a path the model writes never comes here (read_file has its own
// door). So that naming a FIFO
// or a device cannot hang ralph or touch the device, only a regular file
// is opened, without blocking, and looked at again once open; no more
// than MaxFileBytes is read of it before it is decoded.
func ReadFile(fsys afero.Fs, path string) (Prepared, error) {
	fi, err := fsys.Stat(path)
	if err != nil {
		return Prepared{}, err
	}
	if !fi.Mode().IsRegular() {
		return Prepared{}, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Prepared{}, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return Prepared{}, err
	}
	if !fi.Mode().IsRegular() {
		// Swapped for something else between the look and the open.
		return Prepared{}, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if fi.Size() > MaxFileBytes {
		return Prepared{}, fmt.Errorf("%w: %s, more than the %s read", ErrTooLarge, text.Size(fi.Size()), text.Size(MaxFileBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return Prepared{}, err
	}
	mediaType := Sniff(data)
	if mediaType == "" {
		return Prepared{}, ErrNotImage
	}
	return Prepare(data, mediaType)
}
