package git

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
)

// ErrObjectChanged marks a checkpoint's object whose bytes no longer hash
// to its name: something wrote `.git/objects` after the checkpoint took it
// (a command of the model's may), and ralph will not put those bytes back
// as yours.
var ErrObjectChanged = errors.New("the checkpoint's copy was changed after the checkpoint was taken: its bytes do not hash to its name")

// checkedBlob reads the n bytes of the blob named object from r and fails
// with ErrObjectChanged, with its last bytes, when they do not hash to
// that name; path names the file in the error. A name of 64 hex digits is
// a SHA-256 repository's. io.ReadFull drops an error that comes with the
// last bytes, so a reader of it that way asks Err after.
func checkedBlob(r io.Reader, object string, n int64, path string) *blobReader {
	return &blobReader{r: r, h: objectHash("blob", n, len(object)), want: object, left: n, path: path}
}

type blobReader struct {
	r    io.Reader
	h    hash.Hash
	want string
	left int64
	path string
	err  error
	done bool // the hash was checked
}

// Err is the error the last bytes came with: ErrObjectChanged, or nil.
func (b *blobReader) Err() error { return b.err }

func (b *blobReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// An empty blob is checked too, at its first read: a model's
		// empty object under the name of your file's content is a
		// blob of no bytes that do not hash to that name.
		if !b.done {
			b.done = true
			if got := hex.EncodeToString(b.h.Sum(nil)); got != b.want {
				b.err = fmt.Errorf("%s (object %s): %w", b.path, b.want, ErrObjectChanged)
				return 0, b.err
			}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	b.left -= int64(n)
	if b.left == 0 {
		b.done = true
		if got := hex.EncodeToString(b.h.Sum(nil)); got != b.want {
			b.err = fmt.Errorf("%s (object %s): %w", b.path, b.want, ErrObjectChanged)
			return n, b.err
		}
		return n, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// Check is Err once the blob is read whole: a reader that took its n
// bytes without asking for more (io.ReadFull of an empty blob asks for
// nothing) has the hash checked here. A blob not read whole fails.
func (b *blobReader) Check() error {
	if !b.done && b.left <= 0 {
		_, _ = b.Read(nil)
	}
	if !b.done {
		return fmt.Errorf("%s (object %s): %w", b.path, b.want, io.ErrUnexpectedEOF)
	}
	return b.err
}
