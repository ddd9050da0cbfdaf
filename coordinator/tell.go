package coordinator

import (
	"slices"
	"sync"

	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// mailboxes are the queues of the child agents working the task loop's
// tasks, so that a message for the loop (ralph say from another
// terminal) reaches each of them at its next step boundary. A message
// sent while no task is worked waits for the next one to start, and so
// does one the last worker ended its task without reading; what no
// worker read when the loop ends, the loop reports (TakeUndelivered).
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

// leave removes a worker's queue. The messages it never read, after
// unheard (those it took but its model never answered, a stop having cut
// it first), go back to waiting for the next worker when no other is
// working: they would otherwise be lost with the queue. (With others
// working, they have their own copies.)
func (m *mailboxes) leave(q *interrupts.Queue, unheard []interrupts.Interrupt) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.queues, q); i >= 0 {
		m.queues = slices.Delete(m.queues, i, i+1)
	}
	if len(m.queues) > 0 {
		return
	}
	m.pending = append(m.pending, unheard...)
	for {
		it, ok := q.Pop()
		if !ok {
			break
		}
		if it.Kind == interrupts.Normal || it.Kind == interrupts.Urgent {
			m.pending = append(m.pending, it)
		}
	}
}

// TakeUndelivered empties the messages for the loop's workers that none
// has read, and returns them: the loop, when it ends, says which messages
// reached no agent, rather than losing them silently.
func (c *Coordinator) TakeUndelivered() []interrupts.Interrupt {
	m := &c.workers
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.pending
	m.pending = nil
	return out
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

// AddNote gives the model context that goes before the next prompt, once,
// after any note waiting already: a chat that let the project go while it
// waited at its prompt says which files another ralph or a person changed
// meanwhile, so the model does not go by what it read before.
func (c *Coordinator) AddNote(text string) {
	c.noteMu.Lock()
	defer c.noteMu.Unlock()
	if c.opts.Note != "" {
		text = c.opts.Note + "\n" + text
	}
	c.opts.Note = text
}

// AttachImages gives the person's next prompt images to show the model
// (a screenshot whose path they pasted, read by the face): they go in
// its message, by reference in the records, and the model client sends
// them as image parts, or a sentence to a model without images. The
// prompt's text names each ("[Image #1: …]"). Only a face calls this,
// right before Run, with what the person wrote: never a path a model
// chose.
func (c *Coordinator) AttachImages(images []conversation.Image) {
	c.noteMu.Lock()
	defer c.noteMu.Unlock()
	c.promptImages = append(c.promptImages, images...)
}

// takeImages empties the images for the next prompt and returns them.
func (c *Coordinator) takeImages() []conversation.Image {
	c.noteMu.Lock()
	defer c.noteMu.Unlock()
	images := c.promptImages
	c.promptImages = nil
	return images
}

// takeNote empties the note for the next prompt and returns it.
func (c *Coordinator) takeNote() string {
	c.noteMu.Lock()
	defer c.noteMu.Unlock()
	note := c.opts.Note
	c.opts.Note = ""
	return note
}
