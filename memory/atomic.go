package memory

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

var tmpSeq atomic.Uint64

// tmpSuffix is a temporary file's random part; should the system's
// randomness fail, the process and a counter still keep it unique.
func tmpSuffix() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err == nil {
		return hex.EncodeToString(b[:])
	}
	return strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tmpSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
}

// WriteFileAtomic replaces path with data so that a reader, or a crash at
// any moment, sees either the old file or the new one, never a mix: it
// writes a temporary file in the same directory, fsyncs it, renames it over
// path and fsyncs the directory. On failure the old file is untouched and
// the temporary file is removed.
func WriteFileAtomic(fs afero.Fs, path string, data []byte, perm os.FileMode) error {
	return writeAtomic(fs, path, data, perm, true)
}

// WriteFileAtomicUnsynced replaces path as WriteFileAtomic does, whole or
// not at all for a reader and for a crash of the process, but without the
// two fsyncs that make the new file survive a crash of the machine. It is
// for files whose loss such a crash may cost nothing: those derived from
// others that are durable (the summary .ralph/session.json, rebuilt from
// the sessions' own records), and conveniences (the cross-project
// registry). An fsync costs about a millisecond on an idle disk and many
// on a busy one, and it is paid on the way to the first request.
func WriteFileAtomicUnsynced(fs afero.Fs, path string, data []byte, perm os.FileMode) error {
	return writeAtomic(fs, path, data, perm, false)
}

func writeAtomic(fs afero.Fs, path string, data []byte, perm os.FileMode, durable bool) error {
	return writeAtomicAfter(fs, path, data, perm, durable, nil)
}

// writeAtomicAfter is writeAtomic, waiting for before (when not nil) to
// return before path is replaced: the new file is written and made durable
// while another file's fsync runs, and appears only once both are done.
// An error from before leaves path as it was.
func writeAtomicAfter(fs afero.Fs, path string, data []byte, perm os.FileMode, durable bool, before func() error) (err error) {
	dir := filepath.Dir(path)
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return &FileError{Op: "save", Path: path, Err: err}
	}
	// The temporary file's name is random and made with O_EXCL: a name
	// someone could guess is a name a command could plant a link at (the
	// person's cache directory may be writable to commands), and O_EXCL
	// never follows one.
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".tmp-"+tmpSuffix())
	f, err := fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return &FileError{Op: "save", Path: path, Err: err}
	}
	defer func() {
		if err != nil {
			_ = fs.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return &FileError{Op: "save", Path: path, Err: err}
	}
	if durable {
		if err = f.Sync(); err != nil {
			_ = f.Close()
			return &FileError{Op: "save", Path: path, Err: err}
		}
	}
	if err = f.Close(); err != nil {
		return &FileError{Op: "save", Path: path, Err: err}
	}
	if before != nil {
		if err = before(); err != nil {
			return err
		}
	}
	recordOwnWrite(path, data)
	if err = replace(fs, tmp, path); err != nil {
		return &FileError{Op: "save", Path: path, Err: err}
	}
	if durable {
		syncDir(fs, dir)
	}
	return nil
}

// syncDir makes a rename durable. Filesystems that cannot open or sync a
// directory (in-memory ones) have nothing to make durable, so errors are
// ignored.
func syncDir(fs afero.Fs, dir string) {
	d, err := fs.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// AppendFile appends data to path, creating it, and optionally fsyncs.
// Appends of whole lines keep logs cheap however long a session runs.
//
// A write that fails half-way (a full disk), or whose sync fails, is cut
// off again, so the log holds whole lines, and only what the caller was
// told was written. Other writers may append to the same file (another
// ralph on the project, a hook): the cut must never take their lines. So
// every AppendFile holds an exclusive flock on the file from its write to
// its cut (lockAppend), and cuts only when the file still ends where its
// own bytes end, which it learns from its offset after the write (with
// O_APPEND, the file's end then): a line another writer appended after
// it, one that takes no lock, is left, and the torn bytes before it with
// it, since cutting them would cut that line.
func AppendFile(fs afero.Fs, path string, data []byte, sync bool) error {
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &FileError{Op: "create", Path: filepath.Dir(path), Err: err}
	}
	f, err := fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return &FileError{Op: "append to", Path: path, Err: err}
	}
	if fd, ok := f.(interface{ Fd() uintptr }); ok {
		if unlock := lockAppend(fd.Fd()); unlock != nil {
			defer unlock() // after Close, which releases it anyway
		}
	}
	n, werr := f.Write(data)
	var serr error
	if sync && werr == nil {
		// One fsync, never a second: after a failed one the kernel may
		// have dropped the pages it could not write and a retry would
		// report success for data that is gone.
		serr = f.Sync()
	}
	if werr != nil || serr != nil {
		cutOwnTail(f, int64(n))
	}
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return &FileError{Op: "append to", Path: path, Err: err}
	}
	return nil
}

// cutOwnTail takes back the n bytes f's last append wrote, when the file
// still ends with them: a half-written line (a full disk) would sit in
// the middle of the log once later appends succeed, and a line whose
// sync failed may or may not be on disk.
func cutOwnTail(f afero.File, n int64) {
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil || end < n {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != end {
		return // another writer's bytes follow ours, or we cannot tell
	}
	_ = f.Truncate(end - n)
}

// ErrChangedUnderfoot says a file was not what its writer read: someone
// else wrote it in between, and the in-place change was not made.
var ErrChangedUnderfoot = errors.New("the file changed since it was read")

// sameContent reports whether r reads exactly was, then ends. It compares
// a piece at a time, so that checking a plan of half a megabyte before
// each checkbox does not allocate a copy of it.
func sameContent(r io.Reader, was []byte) bool {
	var piece [32 << 10]byte
	for {
		n, err := io.ReadFull(r, piece[:min(len(piece), len(was)+1)])
		if n > len(was) || !bytes.Equal(piece[:n], was[:n]) {
			return false
		}
		was = was[n:]
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return len(was) == 0
		case err != nil:
			return false
		}
	}
}

// ReplaceByte changes the one byte at off of path from was[off] to b, in
// place, and fsyncs: for a change of one character (a task's checkbox) of
// a long file, where WriteFileAtomic would write and sync the whole file
// again. One byte written is atomic by itself: a reader or a crash sees
// the old byte or the new one. The file is first read back through the
// same descriptor and must still be was, so that a file someone else
// wrote meanwhile (an editor saves by replacing it) gets
// ErrChangedUnderfoot and is left alone; the caller then writes whole.
// The write goes through fs's door like any other, so a link is not
// followed.
func ReplaceByte(fs afero.Fs, path string, off int, b byte, was []byte) error {
	if off < 0 || off >= len(was) {
		return fmt.Errorf("replace byte %d of %s: %w", off, path, ErrChangedUnderfoot)
	}
	f, err := fs.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, rootfs.ErrHardLink) {
		// Written whole and renamed, the file loses its other name
		// rather than writing through it.
		return fmt.Errorf("replace byte %d of %s: %w: %w", off, path, ErrChangedUnderfoot, err)
	}
	if err != nil {
		return &FileError{Op: "write", Path: path, Err: err}
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || rootfs.Links(fi) > 1 {
		_ = f.Close()
		return fmt.Errorf("replace byte %d of %s: %w", off, path, ErrChangedUnderfoot)
	}
	if !sameContent(f, was) {
		_ = f.Close()
		return fmt.Errorf("replace byte %d of %s: %w", off, path, ErrChangedUnderfoot)
	}
	_, err = f.Seek(int64(off), io.SeekStart)
	if err == nil {
		_, err = f.Write([]byte{b})
	}
	if err == nil {
		// One fsync, never a second (see AppendFile).
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &FileError{Op: "write", Path: path, Err: err}
	}
	return nil
}
