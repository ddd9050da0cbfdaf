//go:build unix && !aix

package memory

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// fdFile is a torn file that shows its descriptor, so AppendFile locks.
type fdFile struct{ *tornFile }

func (f fdFile) Fd() uintptr { return f.File.(interface{ Fd() uintptr }).Fd() }

type fdFs struct{ *tornFs }

func (f fdFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	file, err := f.tornFs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return fdFile{file.(*tornFile)}, nil
}

// TestAppendFileLocksOutOtherAppendsUntilItsCut: another AppendFile of
// the same file, started while a failed append has still to cut its torn
// bytes off, waits for the cut (the flock every AppendFile takes), and
// lands whole after the log's last whole line.
func TestAppendFileLocksOutOtherAppendsUntilItsCut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, []byte("{\"a\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	between := func() {
		go func() { done <- AppendFile(afero.NewOsFs(), path, []byte("{\"other\":2}\n"), false) }()
		// Time for the other append to reach the lock; it must wait
		// there however long this one takes.
		time.Sleep(50 * time.Millisecond)
	}
	if err := AppendFile(fdFs{&tornFs{Fs: afero.NewOsFs(), between: between}}, path, []byte("{\"b\":2222222222}\n"), false); err == nil {
		t.Fatal("the torn append reported no error")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":1}\n{\"other\":2}\n"; string(got) != want {
		t.Errorf("the log is %q, want %q", got, want)
	}
}
