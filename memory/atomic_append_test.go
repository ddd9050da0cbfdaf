package memory

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/afero"
)

// tornFs opens files whose Write stores half the data and fails as a
// full disk does, calling between first, as another writer would append
// in between.
type tornFs struct {
	afero.Fs
	between func()
}

func (t *tornFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	f, err := t.Fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &tornFile{File: f, fs: t}, nil
}

type tornFile struct {
	afero.File
	fs *tornFs
}

func (f *tornFile) Write(p []byte) (int, error) {
	n, _ := f.File.Write(p[:len(p)/2])
	if f.fs.between != nil {
		f.fs.between()
	}
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// TestAppendFileCutsNoOtherWritersLine: a failed append whose file
// another writer appended to after it (one that takes no lock, between
// the write and the cut) leaves that writer's line whole; the cut used
// to take the file back to its size before the write, and the line with
// it (issue 89, a minor item).
func TestAppendFileCutsNoOtherWritersLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, []byte("{\"a\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteString("{\"other\":2}\n"); err != nil {
			t.Error(err)
		}
	}
	// The wrapped file hides its descriptor, so no lock is taken: the
	// cut must see the other line by itself.
	err := AppendFile(&tornFs{Fs: afero.NewOsFs(), between: other}, path, []byte("{\"b\":2222222222}\n"), false)
	if err == nil {
		t.Fatal("the torn append reported no error")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "{\"a\":1}\n") || !strings.HasSuffix(string(got), "{\"other\":2}\n") {
		t.Errorf("the log is %q: the other writer's line was cut", got)
	}
}
