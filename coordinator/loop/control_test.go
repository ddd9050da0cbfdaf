package loop

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// stateStore keeps the saved state in memory, as the session would.
type stateStore struct {
	mu sync.Mutex
	st memory.State
}

func (s *stateStore) AppendMessages(...conversation.Message) error { return nil }
func (s *stateStore) AppendLog(string, any) error                  { return nil }
func (s *stateStore) SaveState(fn func(*memory.State)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.st)
	return nil
}
func (s *stateStore) status() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Status
}

// A paused loop is idle only once the task in flight has ended and the
// session says paused; a conversation's saves to the same session do not
// change that, and Resume ends it at once.
func TestLoopControlIdleOnlyWhenNothingIsInFlight(t *testing.T) {
	root, fs := taskProject(t, taskList(2))
	ctl := NewControl()
	store := &stateStore{}
	var calls atomic.Int32
	release := make(chan struct{})
	res := make(chan Result, 1)
	go func() {
		res <- Run(context.Background(), Options{
			Fs: fs, Root: root, Control: ctl, Store: ctl.Watch(store),
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
				if calls.Add(1) == 1 {
					<-release
				}
				return Outcome{Completed: true}
			}),
		})
	}()
	waitUntil(t, func() bool { return calls.Load() == 1 })
	if err := ctl.Pause(); err != nil {
		t.Fatal(err)
	}
	if !ctl.Paused() || ctl.Idle() {
		t.Fatalf("with a task in flight: paused %v, idle %v", ctl.Paused(), ctl.Idle())
	}
	close(release)
	waitUntil(t, ctl.Idle)
	if s := store.status(); s != memory.StatusPaused || calls.Load() != 1 {
		t.Fatalf("idle with status %q after %d task(s)", s, calls.Load())
	}
	// A conversation beside the paused loop writes the same session
	// through its own, unwatched store.
	_ = store.SaveState(func(s *memory.State) { s.Status = memory.StatusRunning })
	if !ctl.Idle() {
		t.Fatal("a conversation's save made the paused loop look busy")
	}
	if err := ctl.Resume(); err != nil {
		t.Fatal(err)
	}
	if ctl.Idle() {
		t.Fatal("still idle after Resume")
	}
	select {
	case r := <-res:
		if r.IsError || len(r.Done) != 2 {
			t.Fatalf("result = %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not finish after Resume")
	}
	if ctl.Idle() || ctl.Paused() {
		t.Fatal("a finished loop still looks paused")
	}
}

func (s *stateStore) state() memory.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// A loop paused with a task in flight says at once that it is pausing
// (status running, pausing set: "pausing" for people), not a plain
// running for as long as the task takes; paused clears it, and so does
// a resume before the task ends.
func TestLoopPausedWithATaskInFlightSaysPausing(t *testing.T) {
	root, fs := taskProject(t, taskList(3))
	ctl := NewControl()
	store := &stateStore{}
	var calls atomic.Int32
	release := make(chan struct{}, 2)
	res := make(chan Result, 1)
	go func() {
		res <- Run(context.Background(), Options{
			Fs: fs, Root: root, Control: ctl, Store: ctl.Watch(store),
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
				calls.Add(1)
				<-release
				return Outcome{Completed: true}
			}),
		})
	}()
	waitUntil(t, func() bool { return calls.Load() == 1 })
	if err := ctl.Pause(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return store.state().Pausing })
	if st := store.state(); st.Status != memory.StatusRunning || st.ShownStatus() != "pausing" {
		t.Fatalf("pausing with a task in flight: %+v", st)
	}
	// Resumed before the task ends: running again, not pausing.
	if err := ctl.Resume(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return !store.state().Pausing })
	// Paused again; the task ends: paused, and no longer pausing.
	if err := ctl.Pause(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return store.state().Pausing })
	release <- struct{}{}
	waitUntil(t, ctl.Idle)
	if st := store.state(); st.Status != memory.StatusPaused || st.Pausing || st.ShownStatus() != memory.StatusPaused {
		t.Fatalf("paused: %+v", st)
	}
	close(release)
	if err := ctl.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-res:
		if r.IsError || len(r.Done) != 3 {
			t.Fatalf("result = %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not finish after Resume")
	}
}
