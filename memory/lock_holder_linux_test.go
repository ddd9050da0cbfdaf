//go:build linux

package memory

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// TestLockHolderIsFoundThroughTheLock: the holder LockHolder names is the
// process holding the flock (this test's, through AcquireLock), whatever
// pid the lock file was made to say.
func TestLockHolderIsFoundThroughTheLock(t *testing.T) {
	dir := t.TempDir()
	fs := afero.NewOsFs()
	lock, err := AcquireLock(fs, dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	// A command writes another pid into the file, in place.
	path := filepath.Join(dir, LockFile)
	b, _ := os.ReadFile(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte(strings.Replace(string(b), `"pid":`, `"pid": 1, "was":`, 1)))
	_ = f.Close()
	h, err := LockHolder(fs, dir)
	if err != nil {
		t.Fatalf("LockHolder: %v", err)
	}
	defer h.Close()
	if h.PID != os.Getpid() {
		t.Fatalf("LockHolder named pid %d, want this process's %d", h.PID, os.Getpid())
	}
}

// TestLockHolderThatIsNoRalph: a lock held by a process that is not a
// ralph (flock(1) here, as a command could run it) is a *NotRalphError,
// and a lock nobody holds is ErrNoHolder: --force signals neither.
func TestLockHolderThatIsNoRalph(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) here")
	}
	dir := t.TempDir()
	fs := afero.NewOsFs()
	path := filepath.Join(dir, LockFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LockHolder(fs, dir); !errors.Is(err, ErrNoHolder) {
		t.Fatalf("a lock nobody holds: %v, want ErrNoHolder", err)
	}
	cmd := exec.Command("flock", "-x", path, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := LockHolder(fs, dir)
		var nr *NotRalphError
		if errors.As(err, &nr) {
			if !strings.Contains(nr.Exe, "flock") && !strings.Contains(nr.Exe, "sleep") {
				t.Fatalf("the holder's executable is %q", nr.Exe)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a lock held by flock(1): %v, want a *NotRalphError", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFlockWritersReadsProcLocks: the lines of /proc/locks that hold an
// exclusive flock on the inode are the holders; a waiter's, a shared
// one's, a POSIX lock's and another inode's are not.
func TestFlockWritersReadsProcLocks(t *testing.T) {
	locks := []byte(`1: FLOCK  ADVISORY  WRITE 4242 fe:00:9978062 0 EOF
1: -> FLOCK  ADVISORY  WRITE 4343 fe:00:9978062 0 EOF
2: FLOCK  ADVISORY  READ 4444 fe:00:9978062 0 EOF
3: POSIX  ADVISORY  WRITE 4545 fe:00:9978062 0 EOF
4: FLOCK  ADVISORY  WRITE 4646 fe:00:12 0 EOF
`)
	if got := flockWriters(locks, 9978062); len(got) != 1 || got[0] != 4242 {
		t.Fatalf("flockWriters = %v, want [4242]", got)
	}
}
