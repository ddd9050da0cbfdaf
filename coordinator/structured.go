package coordinator

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/schema"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// ErrNotConforming: the final answer did not conform to the output schema
// after the model was told why once.
var ErrNotConforming = errors.New("the final answer does not conform to the output schema")

// Structured output (--output-schema): the agent works as it always does,
// and its final answer must be JSON that conforms to a schema.
//
// Where the wire takes a schema beside tools (OpenAI's chat completions
// and Responses API), every request carries it, as codex exec
// --output-schema sends it: the turns that call tools call them, and the
// text of the turn that calls none is the schema's JSON, so no request is
// added. The Messages API has no such mode beside tools: forcing the
// answer tool on every request would keep the model from calling any
// other, so there the agent works without it, and when it would finish,
// one more request asks for the answer through a forced call of the
// answer tool (llm.Request.Answer). Either way the answer is validated;
// one that does not conform is asked for again once, with the validation
// error, and then ends the run as an error carrying that error.

// SetOutputSchema makes the final answer of the next runs conform to s
// (nil: any answer); a child agent's answers are its own.
func (c *Coordinator) SetOutputSchema(s *schema.Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.schema = s
}

func (c *Coordinator) outputSchema() *schema.Schema {
	if c.opts.parent != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.schema
}

// schemaState is one run's progress towards a conforming answer.
type schemaState struct {
	// retried: the model was told once why its answer does not conform.
	retried bool
}

// structuredAnswer settles a final answer under the output schema sc:
// the result when it conforms or may not be asked for again, or again
// set when the conversation has a message asking for it (the caller
// goes on to the next turn, with c.answering set).
func (c *Coordinator) structuredAnswer(sc *schema.Schema, resp llm.Response, st *schemaState) (res event.Result, again bool) {
	answer := resp.Message.Content
	value, err := sc.Check(answer)
	if err == nil {
		return event.Result{Subtype: event.SubtypeSuccess, Text: string(value), Structured: value}, false
	}
	// The validator's words alone, without the sentinel's.
	detail := strings.TrimPrefix(err.Error(), schema.ErrNotConforming.Error()+": ")
	var ask string
	switch {
	case !resp.Constrained:
		// Prose from a wire without a schema mode beside tools: the
		// answer is asked for in the schema now. No retry is spent.
		ask = "[ralph] Now give your final answer as JSON that conforms to the output schema, with the " + llm.AnswerTool + " tool where you have it."
		c.logDecision(memory.DecisionRecord{Kind: "structured_output", Detail: "asked for the final answer in the output schema",
			Reason: "the model's wire takes no schema beside tools, so its answer came as text, not the schema's JSON"})
	case !st.retried:
		st.retried = true
		ask = fmt.Sprintf("[ralph] Your final answer does not conform to the output schema: %s. Give the final answer again as JSON that conforms to it.", detail)
		c.logDecision(memory.DecisionRecord{Kind: "structured_output", Detail: "asked for the final answer again: " + detail,
			Reason: "the answer did not validate against the output schema; the model is told why once"})
	default:
		ferr := fmt.Errorf("%w after one retry: %s", ErrNotConforming, detail)
		c.logError("model", "", ferr.Error())
		c.emit(event.Event{Type: event.Error, Text: ferr.Error()})
		return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: ferr, Text: ferr.Error()}, false
	}
	c.appendMessages(conversation.Message{Role: conversation.RoleUser, Content: ask})
	c.answering = true
	return event.Result{}, true
}
