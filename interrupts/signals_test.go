//go:build unix

package interrupts

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestListenEarlyThenAttach: a listener started early catches the signal
// once NotifySignals has attached a queue, and stop gives signals their
// default effect back (the next NotifySignals registers again).
func TestListenEarlyThenAttach(t *testing.T) {
	for round := 0; round < 3; round++ {
		Listen()
		q := NewQueue()
		stop := NotifySignals(context.Background(), q)
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-q.Ready():
		case <-time.After(2 * time.Second):
			t.Fatal("no interrupt after SIGINT")
		}
		if it, ok := q.Pop(); !ok || it.Signal != syscall.SIGINT {
			t.Fatalf("got %+v, %v", it, ok)
		}
		stop()
		stop() // twice is harmless
	}
}

// TestSignalBeforeAttachEndsTheProcess: between Listen and NotifySignals a
// signal ends the process by that signal, as it would if ralph had not
// started listening early: nothing is left waiting on a queue nobody reads.
func TestSignalBeforeAttachEndsTheProcess(t *testing.T) {
	if os.Getenv("RALPH_SIGNAL_CHILD") == "1" {
		Listen()
		listenMu.Lock()
		l := current
		listenMu.Unlock()
		<-l.registered
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		time.Sleep(5 * time.Second)
		os.Exit(0) // the signal did not end the process
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSignalBeforeAttachEndsTheProcess$")
	cmd.Env = append(os.Environ(), "RALPH_SIGNAL_CHILD=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want death by SIGTERM", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v, want death by SIGTERM", ws)
	}
}

// TestStopWithContext: the listener lets go when ctx ends.
func TestStopWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := NotifySignals(ctx, NewQueue())
	cancel()
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("stop did not return after ctx ended")
	}
}

// TestStopSignalsAreOneList: a hangup (a closed terminal, a lost ssh)
// stops ralph as SIGINT and SIGTERM do, through the one listener, so the
// running command's end puts back what it changed (issue 66), and the
// exit code says which signal it was.
func TestStopSignalsAreOneList(t *testing.T) {
	for _, want := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		found := false
		for _, s := range stopSignals {
			found = found || s == want
		}
		if !found {
			t.Errorf("%v is not among the stop signals %v", want, stopSignals)
		}
	}
	if got := ExitCode(syscall.SIGHUP); got != 129 {
		t.Errorf("ExitCode(SIGHUP) = %d, want 129", got)
	}
}
