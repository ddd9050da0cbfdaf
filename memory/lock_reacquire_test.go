package memory

import (
	"testing"

	"github.com/spf13/afero"
)

// TestLockReacquire: a released lock is taken back as the same value, for
// the same session; while another holder has the project, taking it back
// is refused with that holder named, and nothing of ours is left behind.
func TestLockReacquire(t *testing.T) {
	for name, fs := range map[string]afero.Fs{"os": afero.NewOsFs(), "memmap": afero.NewMemMapFs()} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if name == "memmap" {
				root = "/p"
			}
			l, err := AcquireLock(fs, root, "chat", false)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Reacquire(); err != nil {
				t.Fatalf("Reacquire of a held lock: %v", err)
			}
			mustRelease(t, l)
			other, err := AcquireLock(fs, root, "oneshot", false)
			if err != nil {
				t.Fatalf("another ralph could not take the released project: %v", err)
			}
			le := lockedError(t, l.Reacquire())
			if le.Holder.SessionID != "oneshot" {
				t.Fatalf("refusal names %+v, want the one-shot's session", le.Holder)
			}
			mustRelease(t, other)
			if err := l.Reacquire(); err != nil {
				t.Fatal(err)
			}
			if got := readLockFile(t, fs, root); got.SessionID != "chat" {
				t.Fatalf("after Reacquire the file says %+v", got)
			}
			if err := l.SetSession("chat2"); err != nil {
				t.Fatalf("SetSession after Reacquire: %v", err)
			}
			_, err = AcquireLock(fs, root, "late", false)
			lockedError(t, err)
			mustRelease(t, l)
			wantStatus(t, fs, root, LockFree)
		})
	}
}
