// Package interrupts holds ralph's priority interrupt queue: the single inbox
// through which people, signals and internal events reach the coordinator.
//
// Every face (one-shot, chat, the task loop) only produces interrupts; the
// coordinator is the only consumer. Keeping one queue with fixed priorities
// means a hard stop can never wait behind a chatty stream of lesser events.
package interrupts

import (
	"os"
	"sync"
	"time"
)

// Kind is an interrupt's priority class. Lower values are more urgent.
type Kind int

const (
	// HardStop cancels everything in flight at once.
	HardStop Kind = iota
	// Urgent is a message that cuts the current model step.
	Urgent
	// Normal is a message delivered at the next step boundary.
	Normal
	// Internal is an event raised by ralph itself (a child finished, a file changed).
	Internal
	numKinds
)

// String names the kind the way logs and events show it.
func (k Kind) String() string {
	switch k {
	case HardStop:
		return "hard_stop"
	case Urgent:
		return "urgent"
	case Normal:
		return "normal"
	case Internal:
		return "internal"
	}
	return "unknown"
}

// Interrupt is one item in the queue.
type Interrupt struct {
	Kind   Kind
	Text   string    // the message, for Urgent and Normal; who asked, for a HardStop (ralph stop)
	Signal os.Signal // the signal that caused a HardStop, if any
	At     time.Time
}

// Queue is a priority queue: Pop returns the most urgent interrupt, and
// interrupts of one kind come out in the order they went in. It is safe for
// any number of producers and one consumer.
type Queue struct {
	mu    sync.Mutex
	items [numKinds][]Interrupt
	ready chan struct{}
}

// NewQueue returns an empty queue.
func NewQueue() *Queue {
	return &Queue{ready: make(chan struct{}, 1)}
}

// Push adds an interrupt and wakes the consumer. It never blocks.
func (q *Queue) Push(it Interrupt) {
	if it.Kind < 0 || it.Kind >= numKinds {
		it.Kind = Internal
	}
	if it.At.IsZero() {
		it.At = time.Now()
	}
	q.mu.Lock()
	q.items[it.Kind] = append(q.items[it.Kind], it)
	q.mu.Unlock()
	if it.Kind == HardStop {
		tellHardStop(it)
	}
	q.wake()
}

// hooks is a list of functions to call, added from any goroutine.
type hooks[T any] struct {
	mu sync.Mutex
	fs []func(T)
}

func (h *hooks[T]) add(f func(T)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fs = append(h.fs, f)
}

func (h *hooks[T]) call(v T) {
	h.mu.Lock()
	fs := h.fs
	h.mu.Unlock()
	for _, f := range fs {
		f(v)
	}
}

var (
	hardStopHooks hooks[Interrupt]
	carryOnHooks  hooks[struct{}]
)

// OnHardStop has f called with every hard stop pushed on any queue, as it
// is pushed. It is for work that no consumer of the queue can end because
// the consumer itself waits on it: a git that ralph runs (memory/git)
// may be blocked on a file the model planted while the run waits for its
// checkpoint, and the stop must reach that git, not the queue's reader.
// f must return at once.
func OnHardStop(f func(Interrupt)) { hardStopHooks.add(f) }

// OnCarryOn has f called whenever CarryOn is: a hook given to OnHardStop
// that takes a signal's stop for the end of the process (a git's grace
// that every later git is held to) undoes that there. f must return at
// once.
func OnCarryOn(f func()) { carryOnHooks.add(func(struct{}) { f() }) }

// CarryOn says that the process goes on after a signal's hard stop: the
// face took the stop as a switch, not an end. ralph run's Ctrl-C at a
// terminal stops the task loop and hands its coordinator to the chat,
// where the person may /run the loop again hours later; without this,
// every git ralph started after that Ctrl-C was ended two seconds after
// it, and the resumed loop's checkpoints failed.
func CarryOn() { carryOnHooks.call(struct{}{}) }

func tellHardStop(it Interrupt) { hardStopHooks.call(it) }

func (q *Queue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Ready is signalled whenever something was pushed. A consumer selects on it
// and then drains with Pop; a wake-up may find the queue already empty.
func (q *Queue) Ready() <-chan struct{} { return q.ready }

// Pop removes and returns the most urgent interrupt.
func (q *Queue) Pop() (Interrupt, bool) { return q.PopAtMost(numKinds - 1) }

// PopAtMost removes and returns the most urgent interrupt whose kind is at
// least as urgent as max; lesser interrupts stay queued. The coordinator uses
// it mid-step, when only a hard stop or an urgent message may cut in.
func (q *Queue) PopAtMost(max Kind) (Interrupt, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for k := Kind(0); k <= max && k < numKinds; k++ {
		if len(q.items[k]) > 0 {
			it := q.items[k][0]
			q.items[k][0] = Interrupt{}
			q.items[k] = q.items[k][1:]
			return it, true
		}
	}
	return Interrupt{}, false
}

// Len reports how many interrupts are queued.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for k := range q.items {
		n += len(q.items[k])
	}
	return n
}
