package loop

import (
	"errors"
	"sync"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
)

// ErrNoLoop is returned when pausing or resuming while no task loop runs.
var ErrNoLoop = errors.New("no task loop is running")

// Control pauses and resumes a running task loop from another
// goroutine (chat's /pause and /run). A paused loop starts no new task;
// tasks already in flight finish, and the session says "paused".
type Control struct {
	mu     sync.Mutex
	active bool
	paused bool
	// idle: the paused loop has nothing in flight any more (see Watch).
	idle bool
	wake chan struct{}
}

// NewControl returns a control for loops that have not started.
func NewControl() *Control { return &Control{wake: make(chan struct{}, 1)} }

// Pause stops the loop from starting new tasks.
func (c *Control) Pause() error { return c.set(true) }

// Resume lets a paused loop go on.
func (c *Control) Resume() error { return c.set(false) }

func (c *Control) set(paused bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.active {
		return ErrNoLoop
	}
	c.paused = paused
	if !paused {
		// A resumed loop may start a task at once: it is not idle from
		// this moment, before it has saved anything.
		c.idle = false
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// Paused reports whether the loop is paused.
func (c *Control) Paused() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// Idle reports whether the loop is paused and has nothing in flight: the
// task it was working on when it was paused has ended, and it waits for
// Resume. Chat frees its prompt for conversation only then, so that a
// conversation never works on the files beside a task.
func (c *Control) Idle() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active && c.paused && c.idle
}

// Watch returns st wrapped so that the loop's own saves tell c when it is
// idle. The loop saves the session as "paused" exactly when it is paused
// with nothing in flight, and saves another status as soon as it works
// again, so the prompt is free exactly while the session says paused.
// Give the wrapped store to the loop only: other writers of the session
// (a conversation) say nothing about the loop.
func (c *Control) Watch(st coordinator.Store) coordinator.Store {
	if c == nil || st == nil {
		return st
	}
	return watchedStore{Store: st, c: c}
}

type watchedStore struct {
	coordinator.Store
	c *Control
}

func (w watchedStore) SaveState(fn func(*memory.State)) error {
	return w.Store.SaveState(func(s *memory.State) {
		fn(s)
		w.c.mu.Lock()
		w.c.idle = s.Status == memory.StatusPaused && w.c.paused
		w.c.mu.Unlock()
	})
}

// changed is signalled on every Pause or Resume.
func (c *Control) changed() <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.wake
}

// begin and end bracket a loop's run; a new loop starts unpaused.
func (c *Control) begin() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.active, c.paused, c.idle = true, false, false
	c.mu.Unlock()
}

func (c *Control) end() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.active, c.paused, c.idle = false, false, false
	c.mu.Unlock()
}
