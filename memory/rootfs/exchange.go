package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoExchange says the system or file system cannot swap two names
// atomically (not Linux, or a file system that refuses
// RENAME_EXCHANGE); the caller renames instead.
var ErrNoExchange = errors.New("the file system cannot exchange two names")

// Exchange swaps the files at a and b, two names in one directory under
// the root, in one step: at every moment each name holds one of the two
// files, whole. Neither name may be a link; the directory is reached
// through none. A file saved again and again (a session's record) is
// written into a kept spare and exchanged with the one it replaces, so
// that no save makes or frees an inode: on a file system without a
// journal each new inode was a search past every one freed in the last
// half-minute, and a long run frees many.
func (f *Fs) Exchange(a, b string) error {
	ra, err := f.rel(a)
	if err != nil {
		return err
	}
	rb, err := f.rel(b)
	if err != nil {
		return err
	}
	if filepath.Dir(ra) != filepath.Dir(rb) {
		return f.pathErr(ErrNoExchange, b)
	}
	d, done, err := f.dirOf(ra, false)
	if err != nil {
		return f.pathErr(err, a)
	}
	defer done()
	dir, _, err := openIn(d, ".", os.O_RDONLY, 0, true, false)
	if err != nil {
		return f.pathErr(err, a)
	}
	defer dir.Close()
	return f.linkErr(exchangeAt(dir, filepath.Base(ra), filepath.Base(rb)), a, b)
}

// Exchange swaps the files at a and b, two names in one directory of the
// person's, in one step, as (*Fs).Exchange does under a project: the
// cross-project registry, which every session updates, is saved through
// a kept spare (memory's writeAtomicSpare). The directory is reached as
// the person's own are, through links (see PersonFs); at the two names no
// link is followed.
func (p *PersonFs) Exchange(a, b string) error {
	if filepath.Dir(a) != filepath.Dir(b) {
		return &fs.PathError{Op: "exchange", Path: b, Err: ErrNoExchange}
	}
	dir, err := os.Open(filepath.Dir(a))
	if err != nil {
		return err
	}
	defer dir.Close()
	return exchangeAt(dir, filepath.Base(a), filepath.Base(b))
}
