package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/git"
)

// TestCheckpointIsTakenWithTheModelsProcessesStill: while a checkpoint's
// git runs, a command left in the background is stopped (state T), and it
// runs again after. A background command swapping a file for a link
// while git read it put ~/.ssh/id_rsa into a checkpoint (the attack's
// REPRO-1), and swapping a directory of .git made git write outside the
// project (REPRO-3).
// Not parallel: the freeze stops every process the test binary started.
func TestCheckpointIsTakenWithTheModelsProcessesStill(t *testing.T) {
	state := spinning(t)
	var during string
	c := &Checkpoints{}
	if _, err := c.stillWhile(context.Background(), func() (*git.Checkpoint, error) {
		during = state()
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if during != "T" {
		t.Errorf("the background command's state during the checkpoint was %q, want T (stopped)", during)
	}
	if after := state(); after == "T" {
		t.Errorf("the background command is still stopped after the checkpoint")
	}
}

// spinning starts a command that runs until the test ends, and returns
// what tells its state (/proc's: "T" stopped).
func spinning(t *testing.T) (state func() string) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return func() string {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return f[0]
	}
}

// TestHoldKeepsTheModelsProcessesStillThroughAnUndo: an undo's Hold stops
// a command left in the background from its look to its own checkpoint
// (a background command exchanged two directories between the two, and
// undo cut a file a Read rule hid from the model); the checkpoints taken
// inside it, with its context, neither wait for it nor thaw the command;
// one taken without it waits for its release; after the release the
// command runs again.
// Not parallel: the freeze stops every process the test binary started.
func TestHoldKeepsTheModelsProcessesStillThroughAnUndo(t *testing.T) {
	state := spinning(t)
	c := &Checkpoints{ready: make(chan struct{}), begin: func() {}}
	close(c.ready)
	c.begun.Store(true)
	ctx, release, err := c.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		inner := ""
		if _, err := c.stillWhile(ctx, func() (*git.Checkpoint, error) {
			inner = state()
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		c.lock(ctx)()
		if inner != "T" || state() != "T" {
			t.Fatalf("inside the hold the command's state was %q, then %q, want T", inner, state())
		}
	}
	outside := make(chan struct{})
	go func() {
		defer close(outside)
		defer c.lock(context.Background())()
		_, _ = c.stillWhile(context.Background(), func() (*git.Checkpoint, error) { return nil, nil })
	}()
	select {
	case <-outside:
		t.Fatal("a checkpoint without the hold's context did not wait for it")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	release()
	select {
	case <-outside:
	case <-time.After(10 * time.Second):
		t.Fatal("the checkpoint waiting for the hold never ran")
	}
	// The hold's context, once released, holds nothing.
	if c.held(ctx) {
		t.Fatal("a released hold still counts as held")
	}
	deadline := time.Now().Add(5 * time.Second)
	for state() == "T" {
		if time.Now().After(deadline) {
			t.Fatal("the command is still stopped after the hold")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
