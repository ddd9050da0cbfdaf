package coordinator

import (
	"context"
	"fmt"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// Reset forgets the conversation except the system prompt (chat's
// /clear) and, with NextSession, goes on in a new session record: what
// was said before the clear is never sent again, not even by a later
// `ralph -c`, and stays in the old session for the person to read or
// resume by id. It returns the id the conversation goes on in. Call it
// only while nothing runs.
func (c *Coordinator) Reset() (string, error) {
	// The cleared session ends for its hooks, and the next prompt
	// starts the new one (SessionStart with source clear).
	if c.restart("clear") {
		c.endSession(context.Background(), EndClear)
	}
	return c.moveOn(memory.DecisionRecord{Kind: "clear", Detail: "the user cleared the conversation", Reason: "the person asked for it (/clear)",
		By: memory.DecidedByPerson})
}

// moveOn records why the conversation leaves its session (d), then keeps
// only the system prompt and, with NextSession, goes on in a new session
// record that starts with it: /clear and /handoff, one way.
func (c *Coordinator) moveOn(d memory.DecisionRecord) (string, error) {
	c.logDecision(d)
	// The conversation that knew the background commands is gone: so
	// are they.
	c.stopBackground("the conversation that started them ended (" + d.Kind + ")")
	if c.opts.NextSession != nil {
		// The recorder writes the clear into the old session before the
		// record moves on.
		_ = c.opts.Events.Flush(context.Background())
		id, err := c.opts.NextSession()
		if err != nil {
			return c.SessionID(), fmt.Errorf("start a new session: %w", err)
		}
		c.mu.Lock()
		c.opts.SessionID = id
		c.mu.Unlock()
		c.statsMu.Lock()
		c.usage, c.counts = conversation.Usage{}, struct{ retries, errors, interrupts int }{}
		// A message the old record lacks is no hole in the new one.
		c.unrecorded = nil
		c.statsMu.Unlock()
		c.turns, c.runStart = 0, 0
		c.turnNow.Store(0)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var kept []conversation.Message
	for _, m := range c.messages {
		if m.Role == conversation.RoleSystem {
			kept = append(kept, m)
		}
	}
	c.messages = kept
	if c.opts.NextSession != nil && c.opts.Store != nil {
		// The new record starts with the system prompt, so a resumed
		// session is told what a new one is.
		c.record(kept...)
	}
	return c.opts.SessionID, nil
}
