package planfile

// Test helpers of memory's own tests that the plan formats' tests use
// too (copied by planmove when the plan formats left memory).

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// failFs wraps a filesystem and fails chosen operations, to check what
// WriteFileAtomic leaves behind when the disk fills up or the kernel
// reports an I/O error half-way.
type failFs struct {
	afero.Fs
	open, write, sync, close, rename error
}

func (f *failFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if f.open != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: f.open}
	}
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &failFile{File: file, fs: f}, nil
}

func (f *failFs) Rename(oldname, newname string) error {
	if f.rename != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: f.rename}
	}
	return f.Fs.Rename(oldname, newname)
}

type failFile struct {
	afero.File
	fs *failFs
}

// Write stores half the data before failing, as a full disk does, so a
// torn temporary file really exists and must be cleaned up.
func (f *failFile) Write(p []byte) (int, error) {
	if f.fs.write != nil {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: f.fs.write}
	}
	return f.File.Write(p)
}

func (f *failFile) Sync() error {
	if f.fs.sync != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: f.fs.sync}
	}
	return f.File.Sync()
}

func (f *failFile) Close() error {
	err := f.File.Close()
	if f.fs.close != nil {
		return &os.PathError{Op: "close", Path: f.Name(), Err: f.fs.close}
	}
	return err
}

const sfRoot = "/project"

var sfNow = time.Date(2026, 11, 21, 14, 3, 9, 0, time.UTC)

func sfRead(t *testing.T, fs afero.Fs, name string) string {
	t.Helper()
	b, err := afero.ReadFile(fs, filepath.Join(sfRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sfWrite(t *testing.T, fs afero.Fs, name, text string) {
	t.Helper()
	if err := afero.WriteFile(fs, filepath.Join(sfRoot, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
