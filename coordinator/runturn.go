package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// runState is what one run carries from turn to turn; it is a type of its
// own because the turn's steps, each a method, read and change it.
type runState struct {
	// stopKeeps counts the times Stop hooks kept this run going: the
	// turn limit's error names them when it ends such a run.
	stopKeeps  int
	structured schemaState
	// compacted says the conversation was compacted after a context-length
	// refusal in this run: once per message, so a refusal after it ends
	// the run rather than compacting again.
	compacted bool
}

// beginRun starts a run: the session's start, the prompt hooks, and the
// prompt in the conversation, with the notes and images that go with it.
// It is false, with the run's result, when the prompt was blocked or
// could not be recorded.
func (c *Coordinator) beginRun(ctx context.Context, prompt string) (event.Result, bool) {
	c.emit(event.Event{Type: event.SessionStarted, Model: c.ModelName(), Text: prompt})
	c.sessionStart(ctx)
	extra, blocked := c.promptSubmit(ctx, prompt)
	if blocked != nil {
		// The prompt never reaches the model, nor the conversation.
		c.emit(event.Event{Type: event.Error, Text: blocked.Error()})
		return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: blocked, Text: blocked.Error()}, false
	}
	c.forgiveTakenBack()
	c.emit(event.Event{Type: event.UserMessage, Text: prompt})
	images := c.takeImages()
	if len(c.messages) == 0 && c.opts.System != "" {
		c.appendMessages(conversation.Message{Role: conversation.RoleSystem, Content: c.opts.System})
	}
	if prompt != "" {
		content := prompt
		if note := c.takeNote(); note != "" {
			content = note + "\n" + prompt
		}
		if note := c.backgroundNote(); note != "" {
			content = note + "\n" + content
		}
		if extra != "" {
			content += "\n\n" + extra
		}
		if err := c.appendPrompt(conversation.Message{Role: conversation.RoleUser, Content: content, Images: images}); err != nil {
			// A new session whose first prompt could not be written was
			// never recorded: nothing goes to the model for it.
			c.emit(event.Event{Type: event.Error, Text: err.Error()})
			return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: err, Text: err.Error()}, false
		}
	}
	return event.Result{}, true
}

// runTurn is one turn of a run: the model's answer, and the tools it
// calls. It is done, with the run's result, when the run ends; not done
// when the run goes on to another turn.
func (c *Coordinator) runTurn(ctx context.Context, st *runState) (event.Result, bool) {
	if res, stop := c.atStepBoundary(ctx, st); stop {
		return res, true
	}
	c.turns++
	c.turnNow.Store(int64(c.turns))
	c.emit(event.Event{Type: event.TurnStarted, Turn: c.turns})
	model := c.ModelName()
	resp, cut, err := c.modelStep(ctx)
	if cut != nil {
		return c.afterCut(cut)
	}
	if err != nil && !st.compacted && errors.Is(err, llm.ErrContextTooLong) {
		st.compacted = true
		var retry bool
		if retry, err = c.compactForRetry(ctx, err); retry {
			return event.Result{}, false
		}
	}
	if err != nil {
		return c.modelFailed(ctx, err), true
	}
	c.addUsage(resp.Usage)
	// The model answered a request that held every message
	// delivered so far, the ask for a structured answer among them.
	c.unheard, c.answering = nil, false
	if t := resp.Truncation; t != nil {
		c.warn("truncated_prompt", t.Sentence(model))
	}
	if res, stop := c.unanswered(resp); stop {
		return res, true
	}
	msg := resp.Message
	c.appendMessages(msg)
	if msg.Content != "" {
		c.emit(event.Event{Type: event.Assistant, Turn: c.turns, Text: msg.Content})
	}
	if err := c.checkRecorded(); err != nil && len(msg.ToolCalls) > 0 {
		// The turn is not in the record: its tools do not run.
		return c.unrecordedResult(err), true
	}
	if len(msg.ToolCalls) == 0 {
		return c.finalAnswer(ctx, resp, st)
	}
	return c.toolTurn(ctx, msg.ToolCalls)
}

// atStepBoundary is what happens between two turns: queued messages are
// delivered, in order, and the run stops (true, with its result) for a
// stop, a record that cannot be written or the turn limit.
func (c *Coordinator) atStepBoundary(ctx context.Context, st *runState) (event.Result, bool) {
	// A step boundary: queued messages are delivered here, in order.
	if stop, ok := c.drainBoundary(); ok {
		return c.interrupted(stop), true
	}
	if ctx.Err() != nil {
		return c.interrupted(interrupts.Interrupt{Kind: interrupts.HardStop}), true
	}
	c.deliverRewakes()
	if err := c.checkRecorded(); err != nil {
		return c.unrecordedResult(err), true
	}
	if c.turns-c.runStart >= c.opts.MaxTurns {
		err := fmt.Errorf("stopped after the limit of %s without a final answer; raise it with --max-turns", text.Counted(c.opts.MaxTurns, "turn", "turns"))
		if st.stopKeeps > 0 {
			err = fmt.Errorf("stopped after the limit of %s: Stop hooks kept the agent working after %s; raise it with --max-turns",
				text.Counted(c.opts.MaxTurns, "turn", "turns"), text.Counted(st.stopKeeps, "answer", "answers"))
		}
		return event.Result{Subtype: event.SubtypeMaxTurns, IsError: true, Err: err, Text: lastAssistantText(c.Messages())}, true
	}
	return event.Result{}, false
}

// afterCut is a turn cut short by a stop: an urgent message is delivered
// and the run goes on with it; any other stop ends the run.
func (c *Coordinator) afterCut(cut *stopCause) (event.Result, bool) {
	if cut.it.Kind == interrupts.Urgent {
		c.deliver(cut.it)
		return event.Result{}, false
	}
	return c.interrupted(cut.it), true
}

// modelFailed ends a run whose model gave no answer: the error is logged
// and told, and the StopFailure hooks run unless the run was stopped.
func (c *Coordinator) modelFailed(ctx context.Context, err error) event.Result {
	err = c.setAside(err)
	c.logError("model", "", err.Error())
	c.emit(event.Event{Type: event.Error, Text: err.Error()})
	if ctx.Err() == nil {
		c.stopFailure(ctx, err)
	}
	return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: err, Text: err.Error()}
}

// finalAnswer is a turn that called no tool: the run's answer, unless a
// Stop hook keeps the run going, or a structured answer is asked again.
func (c *Coordinator) finalAnswer(ctx context.Context, resp llm.Response, st *runState) (event.Result, bool) {
	msg := resp.Message
	if c.stopHook(ctx, msg.Content, &st.stopKeeps) {
		return event.Result{}, false
	}
	if sc := c.outputSchema(); sc != nil {
		res, again := c.structuredAnswer(sc, resp, &st.structured)
		if again {
			return event.Result{}, false
		}
		if res.IsError {
			return res, true
		}
		if failed, bad := c.answerUnrecorded(res.Text); bad {
			return failed, true
		}
		return res, true
	}
	if res, failed := c.answerUnrecorded(msg.Content); failed {
		return res, true
	}
	// Run's end saves the answer with the final status: one
	// save at the end, not two.
	return event.Result{Subtype: event.SubtypeSuccess, Text: msg.Content}, true
}

// toolTurn runs the tools a turn called, between checkpoints. The run
// ends (true) when a stop cuts them or the model is caught in a loop, and
// is saved as running otherwise.
func (c *Coordinator) toolTurn(ctx context.Context, calls []conversation.ToolCall) (event.Result, bool) {
	if c.opts.Checkpoints != nil && c.mayChangeFiles(calls) {
		c.opts.Checkpoints.Before(ctx)
	}
	c.stepOpen = true
	cut := c.toolStep(ctx, calls)
	c.checkpointAfter(calls, c.turns)
	if cut != nil {
		return c.afterCut(cut)
	}
	if name, ok := c.looping(); ok {
		err := fmt.Errorf("%w: the same %s call returned the same result %d times in a row; stopped", ErrLoopDetected, name, loopLimit)
		c.logError("loop", name, err.Error())
		c.emit(event.Event{Type: event.Error, Text: err.Error()})
		return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: err, Text: err.Error()}, true
	}
	c.save(memory.StatusRunning, "")
	return event.Result{}, false
}
