//go:build unix

package interrupts

import (
	"context"
	"syscall"
	"testing"
	"time"
)

func TestNotifySignalsPushesHardStop(t *testing.T) {
	q := NewQueue()
	stop := NotifySignals(context.Background(), q)
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-q.Ready():
	case <-time.After(2 * time.Second):
		t.Fatal("no interrupt after SIGTERM")
	}
	it, ok := q.Pop()
	if !ok || it.Kind != HardStop || it.Signal != syscall.SIGTERM {
		t.Fatalf("got %+v, %v", it, ok)
	}
	if ExitCode(it.Signal) != 143 || ExitCode(syscall.SIGINT) != 130 {
		t.Fatalf("exit codes %d %d", ExitCode(it.Signal), ExitCode(syscall.SIGINT))
	}
}
