package memory

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"
)

func TestLockAcquireRelease(t *testing.T) {
	fs, root := afero.NewOsFs(), t.TempDir()
	wantStatus(t, fs, root, LockFree)
	l, err := AcquireLock(fs, root, "s1", false)
	if err != nil {
		t.Fatal(err)
	}
	me := l.Info()
	host, _ := os.Hostname()
	if me.PID != os.Getpid() || me.StartTime == 0 || me.Hostname != host || me.BootID == "" || me.SessionID != "s1" || me.Command == "" {
		t.Fatalf("info = %+v", me)
	}
	if got := readLockFile(t, fs, root); got.PID != me.PID || got.StartTime != me.StartTime || !got.AcquiredAt.Equal(me.AcquiredAt) {
		t.Fatalf("file says %+v, lock says %+v", got, me)
	}
	if _, ok := l.Previous(); ok {
		t.Fatal("a fresh project has no previous holder")
	}
	wantStatus(t, fs, root, LockHeld)

	// flock belongs to an open file description, so a second open in this
	// same process is refused like another process would be.
	_, err = AcquireLock(fs, root, "s2", false)
	le := lockedError(t, err)
	if le.Foreign || le.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) ||
		!strings.Contains(err.Error(), "session s1") {
		t.Fatalf("LockedError = %+v: %v", le, err)
	}

	if err := l.SetSession("s9"); err != nil {
		t.Fatal(err)
	}
	if got := readLockFile(t, fs, root); got.SessionID != "s9" || l.Info().SessionID != "s9" {
		t.Fatalf("after SetSession the file says %+v", got)
	}
	mustRelease(t, l)
	mustRelease(t, l) // idempotent
	if b, err := os.ReadFile(filepath.Join(root, LockFile)); err != nil || len(b) > 0 {
		t.Fatalf("after Release the lock file says %q (%v), want it kept, empty", b, err)
	}
	if err := l.SetSession("late"); err == nil {
		t.Fatal("SetSession after Release succeeded")
	}
	wantStatus(t, fs, root, LockFree)

	l2, err := AcquireLock(fs, root, "s3", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l2.Previous(); ok {
		t.Fatal("a released lock must not show up as a previous holder")
	}
	mustRelease(t, l2)
}

func TestLockCrashedHolderRecovered(t *testing.T) {
	fs, root := afero.NewOsFs(), t.TempDir()
	h, child := holdingChild(t, root)
	if _, err := AcquireLock(fs, root, "", false); lockedError(t, err).Holder.PID != child.PID {
		t.Fatalf("locked by the wrong holder: %v", err)
	}
	h.kill(t)
	if info := wantStatus(t, fs, root, LockStale); info.PID != child.PID {
		t.Fatalf("stale lock names pid %d, want %d", info.PID, child.PID)
	}
	l, err := AcquireLock(fs, root, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer mustRelease(t, l)
	prev, ok := l.Previous()
	if !ok || prev.PID != child.PID || prev.StartTime != child.StartTime || prev.SessionID != "child-session" || l.Forced() {
		t.Fatalf("Previous = %+v, %v (forced %v); want the crashed child %+v", prev, ok, l.Forced(), child)
	}
}

// TestLockTwentyProcesses starts 20 processes that all try to take the
// lock at the same moment: exactly one may win. The winner holds the lock
// until all the others have given up, so two winners always mean two
// owners at once.
func TestLockTwentyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 100 processes")
	}
	for round := range 5 {
		root := t.TempDir()
		hs := make([]*helper, 20)
		for i := range hs {
			hs[i] = startHelper(t, "race", root)
		}
		for _, h := range hs {
			if l := h.line(t); l != "ready" {
				t.Fatalf("helper said %q", l)
			}
		}
		for _, h := range hs {
			_, _ = io.WriteString(h.stdin, "go\n")
		}
		winners, losers := 0, 0
		for _, h := range hs {
			if l, ok := h.next(t); ok {
				if l != "won" {
					t.Fatalf("helper said %q", l)
				}
				winners++
				continue
			}
			var ee *exec.ExitError
			if err := h.cmd.Wait(); errors.As(err, &ee) && ee.ExitCode() == 3 {
				losers++
			} else {
				t.Fatalf("round %d: helper failed: %v: %s", round, err, h.stderr.String())
			}
		}
		if winners != 1 || losers != 19 {
			t.Fatalf("round %d: %d processes held the lock at once, %d were refused; want 1 and 19", round, winners, losers)
		}
		for _, h := range hs {
			if h.cmd.ProcessState == nil {
				_ = h.stdin.Close()
				if err := h.cmd.Wait(); err != nil {
					t.Fatalf("round %d: winner failed to release: %v: %s", round, err, h.stderr.String())
				}
			}
		}
		wantStatus(t, afero.NewOsFs(), root, LockFree)
	}
}

// TestLockReusedPID: a lock file naming our own pid but another start time
// was written by an earlier process that had our pid; it is stale.
func TestLockReusedPID(t *testing.T) {
	me := selfInfo("")
	old := me
	old.StartTime = me.StartTime - 1
	old.AcquiredAt = time.Now().Add(-time.Hour).UTC()
	old.SessionID = "old"
	for name, fs := range map[string]afero.Fs{"os": afero.NewOsFs(), "mem": afero.NewMemMapFs()} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeLockFile(t, fs, root, old)
			wantStatus(t, fs, root, LockStale)
			l, err := AcquireLock(fs, root, "new", false)
			if err != nil {
				t.Fatal(err)
			}
			defer mustRelease(t, l)
			if prev, ok := l.Previous(); !ok || prev.SessionID != "old" || l.Forced() {
				t.Fatalf("Previous = %+v, %v", prev, ok)
			}
			if got := readLockFile(t, fs, root); got.StartTime != me.StartTime || got.SessionID != "new" {
				t.Fatalf("file says %+v", got)
			}
		})
	}
}

func TestLockForeignHost(t *testing.T) {
	for name, fs := range map[string]afero.Fs{"os": afero.NewOsFs(), "mem": afero.NewMemMapFs()} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			foreign := LockInfo{PID: os.Getpid(), Hostname: "build-box-7.example", StartTime: 42, SessionID: "far",
				AcquiredAt: time.Now().Add(-3 * time.Minute).UTC()}
			writeLockFile(t, fs, root, foreign)
			wantStatus(t, fs, root, LockForeign)
			_, err := AcquireLock(fs, root, "", false)
			le := lockedError(t, err)
			if !le.Foreign || !strings.Contains(err.Error(), "on host build-box-7.example") ||
				!strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), "3m ago") {
				t.Fatalf("LockedError = %+v: %v", le, err)
			}
			if got := readLockFile(t, fs, root); got.Hostname != foreign.Hostname {
				t.Fatal("a refused AcquireLock changed the lock file")
			}
			l, err := AcquireLock(fs, root, "", true)
			if err != nil {
				t.Fatal(err)
			}
			defer mustRelease(t, l)
			if prev, ok := l.Previous(); !ok || prev.Hostname != foreign.Hostname || !l.Forced() {
				t.Fatalf("Previous = %+v, %v, forced %v", prev, ok, l.Forced())
			}
			if got := readLockFile(t, fs, root); got.Hostname != l.Info().Hostname || got.PID != os.Getpid() {
				t.Fatalf("file says %+v", got)
			}
		})
	}
}

func TestLockForceOverLiveHolder(t *testing.T) {
	fs, root := afero.NewOsFs(), t.TempDir()
	_, child := holdingChild(t, root)
	l, err := AcquireLock(fs, root, "mine", true)
	if err != nil {
		t.Fatal(err)
	}
	if prev, ok := l.Previous(); !ok || prev.PID != child.PID || !l.Forced() {
		t.Fatalf("Previous = %+v, %v, forced %v", prev, ok, l.Forced())
	}
	if info := wantStatus(t, fs, root, LockHeld); info.PID != os.Getpid() || info.SessionID != "mine" {
		t.Fatalf("after a forced takeover the lock says %+v", info)
	}
	// Newcomers now meet our flock, not the displaced child's.
	if _, err := AcquireLock(fs, root, "", false); lockedError(t, err).Holder.PID != os.Getpid() {
		t.Fatalf("newcomer refused by %v", err)
	}
	mustRelease(t, l)
	wantStatus(t, fs, root, LockFree)
}

// TestLockDisplacedHolder: a holder displaced by force notices on
// SetSession and its Release leaves the new owner's file alone.
func TestLockDisplacedHolder(t *testing.T) {
	fs, root := afero.NewOsFs(), t.TempDir()
	old, err := AcquireLock(fs, root, "old", false)
	if err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLock(fs, root, "new", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.SetSession("x"); err == nil {
		t.Fatal("the displaced holder could still write its info")
	}
	mustRelease(t, old)
	if info := wantStatus(t, fs, root, LockHeld); info.SessionID != "new" {
		t.Fatalf("lock says %+v", info)
	}
	mustRelease(t, l)
}

// TestLockReplacedBetweenOpenAndFlock: the owner releases (unlinking the
// file) and a third ralph takes a new file after we opened the old one but
// before we flocked it. Our flock on the unlinked inode must not count.
func TestLockReplacedBetweenOpenAndFlock(t *testing.T) {
	fs, root := afero.NewOsFs(), t.TempDir()
	first, err := AcquireLock(fs, root, "first", false)
	if err != nil {
		t.Fatal(err)
	}
	var third *Lock
	testHookAfterOpen = func() {
		testHookAfterOpen = nil
		mustRelease(t, first)
		if third, err = AcquireLock(fs, root, "third", false); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookAfterOpen = nil }()
	_, err = AcquireLock(fs, root, "second", false)
	if third == nil {
		t.Fatal("the hook did not run")
	}
	defer mustRelease(t, third)
	if le := lockedError(t, err); le.Holder.SessionID != "third" {
		t.Fatalf("refused by %+v, want the third ralph", le.Holder)
	}
}

func TestReadLockStatuses(t *testing.T) {
	osfs, mem := afero.NewOsFs(), afero.NewMemMapFs()
	me := selfInfo("")
	dead := deadProcess(t)
	otherBoot := me
	otherBoot.BootID = "00000000-0000-0000-0000-000000000000"
	cases := []struct {
		name  string
		fs    afero.Fs
		setup func(t *testing.T, root string)
		want  Staleness
	}{
		{"no file", osfs, func(*testing.T, string) {}, LockFree},
		{"empty file", osfs, func(t *testing.T, root string) { writeRaw(t, osfs, root, "") }, LockFree},
		{"torn file", osfs, func(t *testing.T, root string) { writeRaw(t, osfs, root, `{"pid": 12`) }, LockStale},
		{"held by a child", osfs, func(t *testing.T, root string) { holdingChild(t, root) }, LockHeld},
		{"dead holder", osfs, func(t *testing.T, root string) { writeLockFile(t, osfs, root, dead) }, LockStale},
		{"foreign", osfs, func(t *testing.T, root string) {
			writeLockFile(t, osfs, root, LockInfo{PID: 1, Hostname: "elsewhere"})
		}, LockForeign},
		{"mem: live holder", mem, func(t *testing.T, root string) { writeLockFile(t, mem, root, me) }, LockHeld},
		{"mem: dead holder", mem, func(t *testing.T, root string) { writeLockFile(t, mem, root, dead) }, LockStale},
		{"mem: other boot", mem, func(t *testing.T, root string) { writeLockFile(t, mem, root, otherBoot) }, LockStale},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.setup(t, root)
			wantStatus(t, c.fs, root, c.want)
		})
	}
}

// TestLockMemMapFs exercises the O_EXCL fallback used where files have no
// descriptor.
func TestLockMemMapFs(t *testing.T) {
	fs, root := afero.NewMemMapFs(), "/proj"
	l, err := AcquireLock(fs, root, "a", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(fs, root, "b", false); lockedError(t, err).Holder.SessionID != "a" {
		t.Fatalf("refused by %v", err)
	}
	if err := l.SetSession("a2"); err != nil || readLockFile(t, fs, root).SessionID != "a2" {
		t.Fatalf("SetSession: %v", err)
	}
	wantStatus(t, fs, root, LockHeld)
	mustRelease(t, l)
	mustRelease(t, l)
	wantStatus(t, fs, root, LockFree)

	l, err = AcquireLock(fs, root, "c", false)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(fs, root, "d", true)
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, l) // displaced: must not remove l2's file
	if info := wantStatus(t, fs, root, LockHeld); info.SessionID != "d" {
		t.Fatalf("lock says %+v", info)
	}
	mustRelease(t, l2)
}

// TestLockMemMapFsConcurrent: goroutines racing for a lock on MemMapFs,
// whose O_EXCL is not atomic by itself, still get one owner.
func TestLockMemMapFsConcurrent(t *testing.T) {
	for round := range 20 {
		fs := afero.NewMemMapFs()
		var attempts, holders sync.WaitGroup
		var winners atomic.Int32
		start := make(chan struct{})
		for range 20 {
			attempts.Add(1)
			holders.Go(func() {
				<-start
				l, err := AcquireLock(fs, "/proj", "", false)
				attempts.Done()
				if err != nil {
					if !errors.Is(err, ErrLocked) {
						t.Error(err)
					}
					return
				}
				winners.Add(1)
				attempts.Wait() // hold until everyone has tried
				mustRelease(t, l)
			})
		}
		close(start)
		holders.Wait()
		if n := winners.Load(); n != 1 {
			t.Fatalf("round %d: %d goroutines held the lock at once", round, n)
		}
	}
}

func TestLockCommandLineRedacted(t *testing.T) {
	got := strings.Join(commandLine([]string{"ralph", "--api-key", "sk-1", "--model=m", "--token=abc", "-p", "fix the key parser"}), " ")
	if want := "ralph --api-key [REDACTED] --model=m --token=[REDACTED] -p fix the key parser"; got != want {
		t.Fatalf("commandLine = %q, want %q", got, want)
	}
}

func BenchmarkAcquireRelease(b *testing.B) {
	fs, root := afero.NewOsFs(), b.TempDir()
	for b.Loop() {
		l, err := AcquireLock(fs, root, "bench", false)
		if err != nil {
			b.Fatal(err)
		}
		mustRelease(b, l)
	}
}

// TestLockInAReadOnlyProject: a project ralph may not write to, with or
// without a .ralph/ already there, is one sentence naming the directory
// (ErrNotWritable, exit 2 for the faces), not a chain of system calls.
func TestLockInAReadOnlyProject(t *testing.T) {
	for _, withState := range []bool{false, true} {
		root := t.TempDir()
		if withState {
			if err := os.Mkdir(filepath.Join(root, StateDir), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		_, err := AcquireLock(afero.NewReadOnlyFs(afero.NewOsFs()), root, "s1", false)
		if !errors.Is(err, ErrNotWritable) {
			t.Fatalf("with .ralph/ %v: err = %v, want ErrNotWritable", withState, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "cannot write to "+filepath.Join(root, StateDir)+" (") || strings.Count(msg, ": ") != 1 {
			t.Fatalf("with .ralph/ %v: %q is not one sentence about the directory", withState, msg)
		}
	}
}

// TestInitInAReadOnlyProject: ralph init in a directory it may not write
// to is the same one sentence, naming the project's directory.
func TestInitInAReadOnlyProject(t *testing.T) {
	root := t.TempDir()
	_, err := InitProject(afero.NewReadOnlyFs(afero.NewOsFs()), root, time.Now())
	if !errors.Is(err, ErrNotWritable) || !strings.HasPrefix(err.Error(), "cannot write to "+root+" (") {
		t.Fatalf("err = %v, want ErrNotWritable naming %s", err, root)
	}
}
