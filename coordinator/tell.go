package coordinator

import (
	"slices"
	"sync"

	"github.com/ralph-dev/ralph/interrupts"
)

// mailboxes are the queues of the child agents working the task loop's
// tasks, so that a message for the loop (ralph say from another
// terminal) reaches each of them at its next step boundary. A message
// sent while no task is worked waits for the next one to start.
type mailboxes struct {
	mu      sync.Mutex
	queues  []*interrupts.Queue
	pending []interrupts.Interrupt
}

// join adds a worker's queue and gives it the messages waiting for one.
func (m *mailboxes) join(q *interrupts.Queue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queues = append(m.queues, q)
	for _, it := range m.pending {
		q.Push(it)
	}
	m.pending = nil
}

func (m *mailboxes) leave(q *interrupts.Queue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.queues, q); i >= 0 {
		m.queues = slices.Delete(m.queues, i, i+1)
	}
}

// TellWorkers delivers a message (Normal or Urgent) to every child agent
// working a task of the loop and reports how many there are; with none,
// it waits for the next task to start and 0 is reported.
func (c *Coordinator) TellWorkers(it interrupts.Interrupt) int {
	m := &c.workers
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queues) == 0 {
		m.pending = append(m.pending, it)
		return 0
	}
	for _, q := range m.queues {
		q.Push(it)
	}
	return len(m.queues)
}
