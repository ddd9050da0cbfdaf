package proctree

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestFreezeHoldsAForkingTreeStill: a shell that forks without pause is
// held still with every process it started, and runs again after Thaw.
// Not parallel: a freeze stops every process the test binary started.
func TestFreezeHoldsAForkingTreeStill(t *testing.T) {
	cmd := exec.Command("sh", "-c", `while :; do sh -c 'sleep 0.01' & sleep 0.001; done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for range 20 {
		h, err := Freeze()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range descendants(os.Getpid()) {
			threads, ok := readThreads(p.pid)
			for tid, th := range threads {
				if ok && !th.still() {
					t.Errorf("process %d (thread %d) runs during the freeze: state %c", p.pid, tid, th.state)
				}
			}
		}
		if len(h.Stopped()) == 0 {
			t.Error("the freeze stopped nothing")
		}
		h.Thaw()
		if threads, _ := readThreads(cmd.Process.Pid); threads[cmd.Process.Pid].state == 'T' {
			// SIGCONT is delivered at once; give the scheduler no slack
			// to hide a missing one.
			t.Error("the shell is still stopped after the thaw")
		}
	}
}

// TestNoChildrenSeesAChild: the quick look Freeze takes first sees a child
// of any of the process's threads, and nothing once it is reaped, so a
// freeze with nothing below ralph skips the walk of /proc and one with a
// command in the background does not.
// Not parallel: it counts the test binary's children, which a test
// beside it starts.
func TestNoChildrenSeesAChild(t *testing.T) {
	self := os.Getpid()
	if !noChildren(self) {
		t.Skip("the test binary has a child already (or no children files): nothing to compare")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if noChildren(self) {
		t.Error("a running child was not seen")
	}
	h, err := Freeze()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Stopped()) != 1 || h.Stopped()[0] != cmd.Process.Pid {
		t.Errorf("the freeze stopped %v, want the child %d", h.Stopped(), cmd.Process.Pid)
	}
	h.Thaw()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !noChildren(self) {
		t.Error("a reaped child is still seen")
	}
}

// TestFreezeBesideRalphsOwnForks: ralph starts its own git processes
// outside the gate (a pack beside a long run's checkpoints), and reads
// directories through a descriptor it dups under syscall.ForkLock for
// reading. A freeze that stopped one of those children between its fork
// and its exec held Go's fork lock with it: the reader waited on it, every
// later start waited behind the reader, the checkpoint's own git among
// them, and the freeze was never thawed. Freezes taken while other
// goroutines start processes and take the lock for reading all end.
func TestFreezeBesideRalphsOwnForks(t *testing.T) {
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true on PATH")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// again runs fn on a goroutine of its own until stop closes.
	again := func(fn func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					fn()
				}
			}
		}()
	}
	for range 2 {
		again(func() { _ = exec.Command(trueBin).Run() })
	}
	again(func() {
		syscall.ForkLock.RLock()
		time.Sleep(50 * time.Microsecond)
		syscall.ForkLock.RUnlock()
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			h, err := Freeze()
			if err != nil {
				continue
			}
			// The checkpoint's own git, started while the freeze holds.
			_ = exec.Command(trueBin).Run()
			h.Thaw()
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		// Let the stopped children go before failing.
		for _, pid := range Descendants(os.Getpid()) {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
		t.Fatal("a freeze beside ralph's own forks never ended: a child stopped between its fork and its exec holds Go's fork lock")
	}
	close(stop)
	wg.Wait()
}
