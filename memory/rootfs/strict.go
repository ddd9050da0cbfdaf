package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// OpenRegular opens name for reading the strict way, for a file whose
// bytes ralph copies or trusts as the person (git's index and config,
// ralph's own index files): no symbolic link in any component, the last
// one included (ErrLink), and nothing but a regular file (ErrNotRegular).
// The open itself is non-blocking, so a FIFO swapped in after the look
// never hangs ralph, and the file opened must be the one looked at. A
// plain Open follows a link while it stays inside the root; a link
// .git/index -> ../secret would still be followed there.
func (f *Fs) OpenRegular(name string) (*os.File, error) {
	r, err := f.rel(name)
	if err != nil {
		return nil, err
	}
	file, err := f.openRegular(r)
	if err != nil {
		return nil, f.pathErr(err, name)
	}
	return file, nil
}

func (f *Fs) openRegular(rel string) (*os.File, error) {
	if rel == "." {
		return nil, &NotRegularError{Name: rel, Mode: fs.ModeDir}
	}
	d, done, err := f.dirOf(rel, false)
	if err != nil {
		return nil, err
	}
	defer done()
	base := filepath.Base(rel)
	fi, err := d.Lstat(base)
	switch {
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s: %w", rel, ErrLink)
	case !fi.Mode().IsRegular():
		return nil, &NotRegularError{Name: rel, Mode: fi.Mode()}
	}
	file, now, err := openIn(d, base, os.O_RDONLY, 0, false, false)
	if err != nil {
		return nil, err
	}
	if !os.SameFile(now, fi) {
		_ = file.Close()
		return nil, fmt.Errorf("%s: %w", rel, ErrLink)
	}
	return file, nil
}

// ReadRegular reads name whole through OpenRegular: a *TooLargeError
// past limit bytes.
func (f *Fs) ReadRegular(name string, limit int64) ([]byte, error) {
	file, err := f.OpenRegular(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var size int64
	if fi, err := file.Stat(); err == nil {
		size = fi.Size()
	}
	return readAtMost(file, name, limit, size)
}

// CreateNew creates name for writing with O_EXCL and no link on the way:
// a file already there, or a link planted at the name, fails it
// (fs.ErrExist) and nothing is written through it.
func (f *Fs) CreateNew(name string, perm os.FileMode) (*os.File, error) {
	r, err := f.rel(name)
	if err != nil {
		return nil, err
	}
	d, done, err := f.dirOf(r, false)
	if err != nil {
		return nil, f.pathErr(err, name)
	}
	defer done()
	file, _, err := openIn(d, filepath.Base(r), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm, false, true)
	if err != nil {
		return nil, f.pathErr(err, name)
	}
	return file, nil
}
