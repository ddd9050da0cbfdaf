package images

import (
	"errors"
	"fmt"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// ErrNotImage is a file that is none of the four formats (Sniff): what
// names it is left as text.
var ErrNotImage = errors.New("not an image")

// ErrNotRegular is a path that names a directory, a pipe or a device:
// the small reader's (rootfs.ErrNotRegular), so one errors.Is serves
// both.
var ErrNotRegular = rootfs.ErrNotRegular

// ReadFile is the image at path, a file the person named (a path pasted
// into their prompt), prepared as Prepare prepares one. It is read
// through fsys, the person's side of the file door (rootfs.Person), not
// a project's: the person may show the model a picture from anywhere,
// and a path the model writes never comes here (read_file has its own
// door). It is read by ralph's one small reader (rootfs.ReadSmall), so
// naming a FIFO or a device cannot hang ralph or touch the device, and
// no more than MaxFileBytes is read of it before it is decoded.
func ReadFile(fsys afero.Fs, path string) (Prepared, error) {
	data, err := rootfs.ReadSmall(fsys, path, MaxFileBytes)
	var tl *rootfs.TooLargeError
	if errors.As(err, &tl) {
		return Prepared{}, fmt.Errorf("%w: %s, more than the %s read", ErrTooLarge, text.Size(tl.Size), text.Size(MaxFileBytes))
	}
	if err != nil {
		return Prepared{}, err
	}
	mediaType := Sniff(data)
	if mediaType == "" {
		return Prepared{}, ErrNotImage
	}
	return Prepare(data, mediaType)
}
