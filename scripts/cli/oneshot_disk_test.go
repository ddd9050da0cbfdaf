package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// TestDiskFailureIsOneSentence is issue 67's fourth and eighth points: a
// failure of the disk ends a one-shot with one line that names its cause
// (a full disk with the space left, a quota used up, an I/O error on the
// file, never "full" for it), without the chain of calls under it, and
// advises `ralph -c` only when the session is on disk to be continued;
// otherwise the same command again.
func TestDiskFailureIsOneSentence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".ralph", "sessions", "s1", "messages.jsonl")
	failed := func(errno syscall.Errno) error {
		inner := &os.PathError{Op: "write", Path: filepath.Join(dir, ".ralph", "sessions", ".new-s1", "messages.jsonl"), Err: errno}
		return fmt.Errorf("saving session state: %w", &memory.FileError{Op: "append to", Path: file, Err: inner})
	}
	for _, tt := range []struct {
		errno     syscall.Errno
		recorded  bool
		want, not []string
	}{
		{syscall.ENOSPC, true, []string{"is full (", "free some space, then ralph -c continues the session"}, []string{"quota", "I/O"}},
		{syscall.ENOSPC, false, []string{"is full (", "free some space, then run the same command again"}, []string{"ralph -c"}},
		{syscall.EDQUOT, false, []string{"you are over quota on the file system of " + dir, "run the same command again"}, []string{"full", " free of", "ralph -c"}},
		{syscall.EIO, true, []string{"an I/O error on " + file, "once the disk works again, ralph -c continues the session"}, []string{"full", "free", "quota"}},
		{syscall.EIO, false, []string{"an I/O error on " + file, "once the disk works again, run the same command again"}, []string{"full", "ralph -c"}},
	} {
		var errb bytes.Buffer
		recorded := tt.recorded
		o := &OneShot{Format: FormatText, Stdout: &bytes.Buffer{}, Stderr: &errb, Cwd: dir, recorded: func() bool { return recorded }}
		o.Start()
		code := o.Finish(event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: failed(tt.errno)})
		line := errb.String()
		if code != ExitFailed || strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "ralph: ") {
			t.Errorf("%v recorded=%v: exit %d, stderr %q, want one line", tt.errno, tt.recorded, code, line)
		}
		for _, w := range tt.want {
			if !strings.Contains(line, w) {
				t.Errorf("%v recorded=%v: %q does not say %q", tt.errno, tt.recorded, line, w)
			}
		}
		for _, w := range append(tt.not, "saving session state", ".new-", "write ") {
			if strings.Contains(line, w) {
				t.Errorf("%v recorded=%v: %q says %q", tt.errno, tt.recorded, line, w)
			}
		}
	}
	// Before anything ran (the project could not be opened), the same
	// command again is the advice, whatever was recorded.
	var errb bytes.Buffer
	o := &OneShot{Format: FormatText, Stdout: &bytes.Buffer{}, Stderr: &errb, Cwd: dir}
	if code := o.Fail(ExitUsage, fmt.Errorf("cannot record the session under %s: %w", dir, failed(syscall.ENOSPC))); code != ExitFailed {
		t.Errorf("Fail: exit %d", code)
	}
	if line := errb.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, "is full (") || !strings.Contains(line, "free some space, then run the same command again") || strings.Contains(line, "ralph -c") {
		t.Errorf("Fail: %q", line)
	}
	if errors.Is(failed(syscall.EIO), memory.ErrDiskFull) {
		t.Error("an I/O error counts as a full disk")
	}
}
