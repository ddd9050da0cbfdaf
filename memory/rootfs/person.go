package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/afero"
)

// PersonFs is the door on the person's own directories outside any
// project: their config directory (ralph/config.toml, approvals, plugin
// records, git trust records), the cross-project registry and state
// directory, the runtime directory and the cache directory (the model
// list). It is never used for a path under a project, which goes through
// New.
//
// Commands cannot write most of these directories, but they can write
// some: a cache directory the person made writable to them
// (sandbox_writable = ["~/.cache"]), an XDG directory inside $TMPDIR as
// on CI. A command there can plant a link at a name ralph writes, or hard
// link one of the person's files to it, and ralph, running as the person,
// would write through it (the model list once overwrote ~/.bashrc). So a
// write here never goes through the name as it found it: a file is
// replaced whole by a temporary file made with O_EXCL under a random name
// and renamed over the name (memory.WriteFileAtomic), which replaces a
// link there and never follows it; and an open for writing follows no
// link at the last component and refuses anything but a regular file
// with one name. Links on the way to a file are followed: the person's
// own directories are often links (a stowed ~/.config), and nothing the
// model wrote is where ralph looks for them.
type PersonFs struct {
	afero.OsFs
}

var _ afero.Fs = (*PersonFs)(nil)
var _ afero.Lstater = (*PersonFs)(nil)

// Person is the person's side of the file door (see PersonFs).
func Person() afero.Fs { return &PersonFs{} }

func (p *PersonFs) Name() string { return "person" }

// writeFlags are the open flags that write or create.
const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_APPEND | os.O_TRUNC

// OpenFile opens name; for writing it follows no link at name, and an
// existing file must be a regular file with no other name before it is
// truncated or written.
func (p *PersonFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&writeFlags == 0 {
		return os.OpenFile(name, flag, perm)
	}
	f, err := openPerson(name, flag&^os.O_TRUNC, perm)
	if err != nil {
		return nil, err
	}
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return f, nil
}

func (p *PersonFs) Create(name string) (afero.File, error) {
	return p.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Chmod changes name's mode, refusing a link at name (os.Chmod would
// change the mode of the file it names).
func (p *PersonFs) Chmod(name string, mode os.FileMode) error {
	if err := notLink(name); err != nil {
		return err
	}
	return os.Chmod(name, mode)
}

// Chtimes changes name's times, refusing a link at name.
func (p *PersonFs) Chtimes(name string, atime, mtime time.Time) error {
	if err := notLink(name); err != nil {
		return err
	}
	return os.Chtimes(name, atime, mtime)
}

// notLink refuses name when it is a symbolic link.
func notLink(name string) error {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "chmod", Path: name, Err: ErrLink}
	}
	return nil
}

// isLinkErr reports whether err from an open without following name says
// name is a link (ELOOP on Unix), checked by looking at name itself.
func isLinkErr(name string, err error) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
		return false
	}
	fi, lerr := os.Lstat(name)
	return lerr == nil && fi.Mode()&fs.ModeSymlink != 0
}

// ErrHardLink says a file ralph would write in the person's directories
// has another name, which a command may have made to send the write to
// one of the person's files.
var ErrHardLink = errors.New("a file with more than one name where ralph writes its own file")

// Links is how many names the file fi describes has (1 where the system
// does not say).
func Links(fi fs.FileInfo) uint64 { return links(fi) }

// soleRegular checks that the open file f is a regular file with one name.
func soleRegular(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w", ErrNotRegular)
	}
	if links(fi) > 1 {
		return ErrHardLink
	}
	return nil
}
