package memory

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestExplainDiskNamesTheCause is issue 67's eighth point: a failed write
// is said in one sentence that names its cause, and the free space only
// where it is the cause: ENOSPC is a full file system with the space
// left, EDQUOT a quota used up, EIO an I/O error on the file, never
// "full". The sentence keeps the error's chain for callers, not its
// words ("write …: write ….tmp-…: …").
func TestExplainDiskNamesTheCause(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".ralph", "session.json")
	failed := func(errno syscall.Errno) error {
		inner := &os.PathError{Op: "write", Path: filepath.Join(dir, ".ralph", ".session.json.tmp-0123"), Err: errno}
		return fmt.Errorf("saving session state: %w", &FileError{Op: "save", Path: file, Err: inner})
	}
	tests := []struct {
		errno     syscall.Errno
		full, io  bool
		want, not []string
	}{
		{syscall.ENOSPC, true, false, []string{"the file system of " + dir, " is full (", " free"}, []string{"quota", "I/O"}},
		{syscall.EDQUOT, true, false, []string{"you are over quota on the file system of " + dir}, []string{" full", " free", "I/O"}},
		{syscall.EIO, false, true, []string{"an I/O error on " + file}, []string{"full", "free", "quota"}},
	}
	for _, tt := range tests {
		err := failed(tt.errno)
		if IsDiskFull(err) != tt.full || !IsDiskError(err) {
			t.Errorf("%v: IsDiskFull %v, IsDiskError %v; want %v, true", tt.errno, IsDiskFull(err), IsDiskError(err), tt.full)
		}
		got := ExplainDisk(err, dir)
		msg := got.Error()
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q does not say %q", tt.errno, msg, w)
			}
		}
		for _, w := range append(tt.not, ".tmp-", "saving", "write ") {
			if strings.Contains(msg, w) {
				t.Errorf("%v: %q says %q", tt.errno, msg, w)
			}
		}
		if !errors.Is(got, tt.errno) {
			t.Errorf("%v: the sentence lost its cause from the chain", tt.errno)
		}
		// Explained twice, or wrapped and explained again, it is the
		// same one sentence.
		if again := ExplainDisk(fmt.Errorf("run: %w", got), dir); again.Error() != msg {
			t.Errorf("%v: explained again: %q, want %q", tt.errno, again, msg)
		}
	}
	// An I/O error on a connection is the network's, not the disk's.
	network := fmt.Errorf("the model's answer broke off: %w", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EIO)})
	if IsDiskError(network) || ExplainDisk(network, dir) != network {
		t.Errorf("an I/O error on a connection was taken for the disk's: %v", ExplainDisk(network, dir))
	}
	other := failed(syscall.EACCES)
	if IsDiskError(other) || ExplainDisk(other, dir) != other {
		t.Errorf("permission denied is no disk failure: %v", ExplainDisk(other, dir))
	}
	if want := "could not save " + file + ": permission denied"; !strings.HasSuffix(other.Error(), want) {
		t.Errorf("%q does not end with %q", other, want)
	}
}
