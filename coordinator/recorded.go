package coordinator

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// Write before do: every message of the conversation is in the session's
// record (the write itself done; its fsync runs beside the request, with
// the step's save) before the request that carries it is sent, and before
// the tools of a turn run. A message that could not be written stops the
// run there, in one sentence.

// record writes msgs, which the conversation holds, to the session's
// record. A message that could not be written stops the conversation
// before its next request (checkRecorded): a model answering a message
// the record lacks leaves a conversation that `ralph -c` cannot go on
// with, and tools run on the word of a turn that was never recorded.
func (c *Coordinator) record(msgs ...conversation.Message) {
	if c.opts.Store == nil || len(msgs) == 0 {
		return
	}
	err := c.opts.Store.AppendMessages(msgs...)
	if err == nil {
		return
	}
	if c.takeBack(msgs, err) {
		// Nothing of them is on disk, and they are out of the
		// conversation again: this run stops before its next request,
		// and the next message (chat's, sent again) goes on.
		c.statsMu.Lock()
		if c.unrecorded == nil {
			c.unrecorded, c.tookBack = err, true
		}
		c.statsMu.Unlock()
		return
	}
	c.keep(err)
	c.statsMu.Lock()
	if c.unrecorded == nil || c.tookBack {
		c.unrecorded, c.tookBack = err, false
	}
	c.statsMu.Unlock()
}

// takeBack takes msgs, the last of the conversation, out of it again when
// the record holds nothing of them (memory.NothingWritten): memory and
// disk then agree, as if they had never been said. A tool's result is
// never taken back: its tool ran, and only a resumed session's repair
// says so to the model (memory.RepairHistory).
func (c *Coordinator) takeBack(msgs []conversation.Message, err error) bool {
	if !memory.NothingWritten(err) || errors.Is(err, memory.ErrNotRecorded) ||
		slices.ContainsFunc(msgs, func(m conversation.Message) bool { return m.Role == conversation.RoleTool }) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.messages) - len(msgs)
	if n < 0 || !slices.EqualFunc(c.messages[n:], msgs, func(a, b conversation.Message) bool {
		return a.Role == b.Role && a.Content == b.Content && len(a.ToolCalls) == len(b.ToolCalls)
	}) {
		return false
	}
	c.messages = c.messages[:n]
	return true
}

// forgiveTakenBack lets a new run go on after the last one stopped on
// messages it took back (record): nothing is missing from the record.
func (c *Coordinator) forgiveTakenBack() {
	c.statsMu.Lock()
	if c.tookBack {
		c.unrecorded, c.tookBack = nil, false
	}
	c.statsMu.Unlock()
}

// checkRecorded is why no request may go to the model now: a message of
// the conversation that could not be written, said in one sentence; nil
// when every message is in the record. It is asked before every request
// and before a turn's tools run.
func (c *Coordinator) checkRecorded() error {
	err := c.unrecordedCause()
	if err == nil || errors.Is(err, memory.ErrNotRecorded) {
		return err
	}
	return fmt.Errorf("ralph stopped before its next request to the model, since the conversation could not be recorded: %w", memory.ExplainDisk(err, ""))
}

// unrecordedCause is the first message's failure to be written, or nil.
func (c *Coordinator) unrecordedCause() error {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.unrecorded
}

// answerUnrecorded ends a run whose final answer could not be written:
// the person has it, the record does not, and the run must not look
// clean.
func (c *Coordinator) answerUnrecorded(answer string) (event.Result, bool) {
	cause := c.unrecordedCause()
	if cause == nil {
		return event.Result{}, false
	}
	err := fmt.Errorf("the model's answer could not be recorded: %w", memory.ExplainDisk(cause, ""))
	c.emit(event.Event{Type: event.Error, Text: err.Error()})
	return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: err, Text: answer}, true
}

// unrecordedResult ends a run that checkRecorded stopped.
func (c *Coordinator) unrecordedResult(err error) event.Result {
	c.emit(event.Event{Type: event.Error, Text: err.Error()})
	return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: err, Text: err.Error()}
}

// appendPrompt appends the person's message as appendMessages does, and
// returns why it may not be sent: the message could not be written (for
// a new session's first prompt memory.ErrNotRecorded, which leaves no
// session at all), or an earlier message of the conversation could not
// be. The run then ends before its request.
func (c *Coordinator) appendPrompt(msg conversation.Message) error {
	if err := c.checkRecorded(); err != nil {
		return err
	}
	c.appendMessages(msg)
	return c.checkRecorded()
}
