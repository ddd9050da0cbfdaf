package coordinator

import (
	"errors"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// ErrNoLoop is returned when pausing or resuming while no task loop runs.
var ErrNoLoop = errors.New("no task loop is running")

// LoopControl pauses and resumes a running task loop from another
// goroutine (chat's /pause and /resume). A paused loop starts no new task;
// tasks already in flight finish, and the session says "paused".
type LoopControl struct {
	mu     sync.Mutex
	active bool
	paused bool
	wake   chan struct{}
}

// NewLoopControl returns a control for loops that have not started.
func NewLoopControl() *LoopControl { return &LoopControl{wake: make(chan struct{}, 1)} }

// Pause stops the loop from starting new tasks.
func (c *LoopControl) Pause() error { return c.set(true) }

// Resume lets a paused loop go on.
func (c *LoopControl) Resume() error { return c.set(false) }

func (c *LoopControl) set(paused bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.active {
		return ErrNoLoop
	}
	c.paused = paused
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// Paused reports whether the loop is paused.
func (c *LoopControl) Paused() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// changed is signalled on every Pause or Resume.
func (c *LoopControl) changed() <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.wake
}

// begin and end bracket a loop's run; a new loop starts unpaused.
func (c *LoopControl) begin() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.active, c.paused = true, false
	c.mu.Unlock()
}

func (c *LoopControl) end() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.active, c.paused = false, false
	c.mu.Unlock()
}

// stopOnConfig ends the loop on a configuration error (a bad key, an
// unknown model, a model without tools, a conversation too long for it):
// no task can succeed until the person fixes it, so retrying would only
// spend attempts and trip the breaker. The task goes back to open, not
// failed, since it was never really tried.
func (l *loop) stopOnConfig(t memory.Task, err error) LoopResult {
	l.stats.Errors++
	if l.o.Store != nil {
		l.keep(l.o.Store.AppendLog(memory.ErrorsLog, memory.ErrorRecord{Time: time.Now().UTC(), Kind: "config", Turn: l.stats.Iterations, Message: t.ID + ": " + err.Error()}))
	}
	if _, uerr := memory.UpdateTasks(l.o.Fs, l.o.Root, func(f *memory.TaskFile) error { return f.SetState(t.ID, memory.TaskOpen) }); uerr != nil {
		return LoopResult{Reason: "cannot update the task file", IsError: true, Err: uerr}
	}
	l.emit(Event{Type: EventTaskChanged, Text: t.ID + " open", Output: t.Title, IsError: true})
	l.decide("config_error", text.Clip(err.Error(), 300))
	l.save(memory.StatusRunning, "")
	return LoopResult{Reason: ReasonConfig, IsError: true, Err: err}
}
