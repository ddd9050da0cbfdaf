package coordinator

import (
	"testing"

	"github.com/ralph-dev/ralph/interrupts"
)

// A message the only worker ended its task without reading waits for the
// next worker, and what none read is taken once, for the loop to report.
func TestMailboxesKeepUnreadMessages(t *testing.T) {
	c := &Coordinator{}
	first := interrupts.NewQueue()
	c.workers.join(first)
	if n := c.TellWorkers(interrupts.Interrupt{Kind: interrupts.Normal, Text: "hello"}); n != 1 {
		t.Fatalf("told %d workers, want 1", n)
	}
	c.workers.leave(first, nil)
	next := interrupts.NewQueue()
	c.workers.join(next)
	if it, ok := next.Pop(); !ok || it.Text != "hello" {
		t.Fatalf("the next worker got %+v, %v", it, ok)
	}
	c.TellWorkers(interrupts.Interrupt{Kind: interrupts.Urgent, Text: "late"})
	c.workers.leave(next, nil)
	got := c.TakeUndelivered()
	if len(got) != 1 || got[0].Text != "late" {
		t.Fatalf("undelivered %+v", got)
	}
	if again := c.TakeUndelivered(); len(again) != 0 {
		t.Fatalf("taken twice: %+v", again)
	}
}
