package project

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// TestIdleLockIsLetGoAndTakenBack: with LetGoWhenIdle the lock is held only
// while some work holds it; taking it back is refused while another ralph
// has the project, and then tells which files changed meanwhile (a project
// outside git: the walk), once.
func TestIdleLockIsLetGoAndTakenBack(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kept.txt"), "same\n")
	write(t, filepath.Join(dir, "gone.txt"), "bye\n")
	fs := afero.NewOsFs()
	p, err := Open(context.Background(), Options{Fs: fs, Dir: dir, Getenv: env(t), Mode: ModeChat})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	release, news, err := p.Hold()
	if err != nil || news != "" {
		t.Fatalf("Hold while held: %q, %v", news, err)
	}
	p.LetGoWhenIdle()
	if _, st, _ := memory.ReadLock(fs, dir); st != memory.LockHeld {
		t.Fatalf("the lock is %s while work holds it", st)
	}
	release()
	release() // a second call changes nothing
	if _, st, _ := memory.ReadLock(fs, dir); st != memory.LockFree {
		t.Fatalf("the lock is %s with no work running", st)
	}
	if got := p.Session.State().Status; memory.Active(got) {
		t.Fatalf("an idle chat's session says %s", got)
	}

	other, err := memory.AcquireLock(fs, dir, "other", false)
	if err != nil {
		t.Fatalf("another ralph beside the idle chat: %v", err)
	}
	time.Sleep(10 * time.Millisecond) // a modification time the stamp can tell apart
	write(t, filepath.Join(dir, "new.txt"), "hello\n")
	write(t, filepath.Join(dir, ".ralph", "mine"), "not the project's\n")
	if err := fs.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Hold(); !errors.Is(err, memory.ErrLocked) {
		t.Fatalf("Hold while another ralph works: %v", err)
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	release, news, err = p.Hold()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(news, ": gone.txt, new.txt") {
		t.Fatalf("news = %q", news)
	}
	if info, st, _ := memory.ReadLock(fs, dir); st != memory.LockHeld || info.SessionID != p.Session.ID {
		t.Fatalf("the lock taken back is %s for %+v", st, info)
	}
	release()
	release, news, err = p.Hold()
	if err != nil || news != "" {
		t.Fatalf("nothing changed, yet: %q, %v", news, err)
	}
	release()
}

// TestIdleLockRecoversAfterACrashBeside: a ralph that died holding the
// project while the chat let it go is recovered from when the chat takes
// the project back, as the next ralph's Open would: its task in progress
// goes back to open, and the person is told.
func TestIdleLockRecoversAfterACrashBeside(t *testing.T) {
	dir := t.TempDir()
	fs := afero.NewOsFs()
	p, err := Open(context.Background(), Options{Fs: fs, Dir: dir, Getenv: env(t), Mode: ModeChat})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.LetGoWhenIdle()
	write(t, filepath.Join(dir, "RALPH_TASKS.md"), "- [~] half done\n")
	// What a ralph killed with the project in hand leaves: its lock file,
	// which nobody flocks.
	write(t, filepath.Join(dir, memory.LockFile), `{"pid":999999,"hostname":"`+hostname(t)+`","start_time":1,"acquired_at":"2026-01-01T00:00:00Z"}`)
	release, news, err := p.Hold()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !strings.Contains(news, "reset 1 task a ralph") {
		t.Fatalf("news = %q", news)
	}
	if got := read(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(got, "- [ ] half done") {
		t.Fatalf("the task left in progress is still %q", got)
	}
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
