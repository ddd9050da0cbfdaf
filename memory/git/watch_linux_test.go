package git

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/interrupts"
)

// TestGitBlockedOnAFIFOIsEnded: a FIFO at .gitignore (which git opens
// and waits on for a writer) ends the git within a second, and the error
// names the file in one sentence.
// Not parallel: it bounds git's end at a second, which tests running beside it would eat into.
func TestGitBlockedOnAFIFOIsEnded(t *testing.T) {
	dir := repo(t)
	sh(t, dir, "mkfifo .gitignore")
	start := time.Now()
	_, err := run(context.Background(), dir, nil, nil, "status", "--porcelain")
	var special *SpecialFileError
	if !errors.As(err, &special) || special.Path != ".gitignore" {
		t.Fatalf("git status on a FIFO at .gitignore: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("git blocked on a FIFO was ended after %s", d)
	}
	if want := "a FIFO at .gitignore keeps git from reading the project"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

// TestAStopEndsAGitItWaitsOn: with the watchdog looking too late to see
// it, a git blocked on a FIFO is ended stopGrace after a hard stop, under
// a context no stop ends.
func TestAStopEndsAGitItWaitsOn(t *testing.T) {
	dir := repo(t)
	sh(t, dir, "mkfifo .gitignore")
	first := watchFirst
	watchFirst = time.Hour
	t.Cleanup(func() { watchFirst = first })
	done := make(chan error, 1)
	go func() {
		_, err := runCmd(context.Background(), SlowTimeout, false, dir, nil, nil, "status", "--porcelain")
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	hurry(false)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), errStopped.Error()) {
			t.Fatalf("a stopped git gave %v", err)
		}
	case <-time.After(stopGrace + 3*time.Second):
		t.Fatal("a hard stop did not end the git blocked on a FIFO")
	}
	// A git started after a stop that is not a signal runs as before.
	if err := sh2(dir); err != nil {
		t.Fatal(err)
	}
}

// sh2 is a git that needs no FIFO: it must still run after a hard stop.
func sh2(dir string) error {
	_, err := run(context.Background(), dir, nil, nil, "rev-parse", "HEAD")
	return err
}

// TestAGitAfterACarriedOnSignalRuns: a signal's stop holds every git
// started later to its deadline, as the process is on its way out; once
// a face says the process carries on (ralph run's Ctrl-C handed over to
// the chat), a git started after that deadline runs to its end.
func TestAGitAfterACarriedOnSignalRuns(t *testing.T) {
	t.Cleanup(unhurry)
	hurry(true)
	// The grace is over: without the carry-on, every later git is ended
	// as it starts.
	watchMu.Lock()
	endsBy = time.Now().Add(-time.Second)
	watchMu.Unlock()
	interrupts.CarryOn()
	dir := repo(t)
	for i := 0; i < 20; i++ {
		if err := sh2(dir); err != nil {
			t.Fatalf("git %d after the carry-on: %v", i, err)
		}
	}
}

// TestAStoppedGitSaysWhichGitOnce: the error of a git a stop ended names
// the git command past its options, and says that ralph was stopped once.
func TestAStoppedGitSaysWhichGitOnce(t *testing.T) {
	err := commandError(context.Background(), Timeout, []string{"-c", "core.quotePath=false", "--no-pager", "commit-tree", "x"}, "", errStopped)
	if want := "git commit-tree: ralph was stopped"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}
