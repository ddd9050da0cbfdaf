package memory

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// exchanger is a file system that swaps two names in one step
// (rootfs.Fs).
type exchanger interface {
	Exchange(a, b string) error
}

// sparePath is the spare kept beside path: the file a save writes into
// and then exchanges with path, which then holds the record before.
func sparePath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".spare")
}

// makeSpare makes the empty spare of path ahead of its first save through
// writeAtomicSpare, where the file system can exchange; it leaves alone
// whatever is already at the spare's name.
func makeSpare(fsys afero.Fs, path string) {
	if _, ok := fsys.(exchanger); !ok {
		return
	}
	if f, err := fsys.OpenFile(sparePath(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		_ = f.Close()
	}
}

// writeAtomicSpare is writeAtomicAfter for a record saved again and
// again (a session's session.json, at every task of a run): the new
// bytes go into a spare kept beside path, which is then exchanged with
// path in one step, so a reader or a crash sees the old record or the
// new one, whole, as with a rename. No save makes or frees a file: on a
// file system without a journal (ext4 as this machine's /tmp has it)
// each new file's inode is a search past every inode freed in the last
// thirty seconds, and a long run's saves alone freed two a task. Where
// the file system cannot exchange (an in-memory one, not Linux), or the
// spare is something other than ralph's own plain file (a link a
// command put there is removed, never written through), it saves as
// writeAtomicAfter does.
func writeAtomicSpare(fsys afero.Fs, path string, data []byte, perm os.FileMode, durable bool, before func() error) error {
	ex, ok := fsys.(exchanger)
	if !ok {
		return writeAtomicAfter(fsys, path, data, perm, durable, before)
	}
	spare := sparePath(path)
	// O_NONBLOCK: a FIFO a command made at the name fails the open
	// (no reader) rather than hang it; the check below refuses it.
	f, err := fsys.OpenFile(spare, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, perm)
	if err != nil {
		// Not ralph's own plain file (a link, a second name, a FIFO):
		// removed, never written through, and this save renames.
		if !errors.Is(err, fs.ErrNotExist) {
			_ = fsys.Remove(spare)
		}
		return writeAtomicAfter(fsys, path, data, perm, durable, before)
	}
	fail := func(err error) error {
		_ = f.Close()
		return &FileError{Op: "save", Path: path, Err: err}
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		_ = fsys.Remove(spare)
		return writeAtomicAfter(fsys, path, data, perm, durable, before)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return fail(err)
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return fail(err)
	}
	if durable {
		// One fsync, never a second (see AppendFile).
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		return &FileError{Op: "save", Path: path, Err: err}
	}
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	recordOwnWrite(path, data)
	err = ex.Exchange(spare, path)
	if errors.Is(err, rootfs.ErrNoExchange) || errors.Is(err, fs.ErrNotExist) {
		// No record yet to exchange with (the first save), or no
		// exchange here: the spare becomes the record.
		err = replace(fsys, spare, path)
	}
	if err != nil {
		return &FileError{Op: "save", Path: path, Err: err}
	}
	if durable {
		syncDir(fsys, filepath.Dir(path))
	}
	return nil
}
