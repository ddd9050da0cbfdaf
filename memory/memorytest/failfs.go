// Package memorytest is test support for the packages that keep ralph's
// state through afero (memory and memory/planfile), as net/http/httptest
// is for net/http: a file system that fails the operations a test picks.
package memorytest

import (
	"os"

	"github.com/spf13/afero"
)

// FailFs wraps a file system and fails chosen operations, to check what a
// write leaves behind when the disk fills up or the kernel reports an I/O
// error half-way. A nil error lets the operation through.
type FailFs struct {
	afero.Fs
	OpenErr, WriteErr, SyncErr, CloseErr, RenameErr error
}

// OpenFile fails with OpenErr, or opens a file whose writes, syncs and
// closes fail as the FailFs says at the time of each call.
func (f *FailFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if f.OpenErr != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: f.OpenErr}
	}
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &failFile{File: file, fs: f}, nil
}

// Rename fails with RenameErr.
func (f *FailFs) Rename(oldname, newname string) error {
	if f.RenameErr != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: f.RenameErr}
	}
	return f.Fs.Rename(oldname, newname)
}

type failFile struct {
	afero.File
	fs *FailFs
}

// Write stores half the data before failing, as a full disk does, so a
// torn temporary file really exists and must be cleaned up.
func (f *failFile) Write(p []byte) (int, error) {
	if f.fs.WriteErr != nil {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: f.fs.WriteErr}
	}
	return f.File.Write(p)
}

func (f *failFile) Sync() error {
	if f.fs.SyncErr != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: f.fs.SyncErr}
	}
	return f.File.Sync()
}

func (f *failFile) Close() error {
	err := f.File.Close()
	if f.fs.CloseErr != nil {
		return &os.PathError{Op: "close", Path: f.Name(), Err: f.fs.CloseErr}
	}
	return err
}
