package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// Why a model turn gave no usable answer; callers branch on them with
// errors.Is.
var (
	// ErrEmptyTurn: the model ended its turn with neither text nor a tool
	// call (it only reasoned, stopped at once, or called a tool the
	// server's parser dropped).
	ErrEmptyTurn = errors.New("the model said nothing")
	// ErrMaxTokens: the answer reached the output limit and was cut
	// (finish_reason "length").
	ErrMaxTokens = errors.New("the answer was cut at the output limit")
	// ErrContentFilter: the endpoint's content filter stopped the answer
	// (finish_reason "content_filter").
	ErrContentFilter = errors.New("the answer was stopped by the endpoint's content filter")
)

// preparer is a tool set with tools that must be made ready before the
// model is told which tools there are (MCP servers, started on first
// need); *tools.Toolset and its views implement it.
type preparer interface {
	Unprepared() bool
	Prepare(ctx context.Context)
}

// servedWindower is a model client that can tell the context window its
// server really serves (*llm.Client, for Ollama).
type servedWindower interface {
	ServedWindow(ctx context.Context, model string) int
}

// servedChecker is a model client that can tell, before a request is
// sent, that the context its server serves cannot hold the request's
// fixed part (*llm.Client, for Ollama).
type servedChecker interface {
	CheckServed(ctx context.Context, model string, need int) error
}

// fixedTokens is the part of every request no fitting can shorten: the
// system prompt and the tool definitions.
func (c *Coordinator) fixedTokens(tools []conversation.ToolDef) int {
	n := llm.EstimateTools(tools)
	for _, m := range c.Messages() {
		if m.Role == conversation.RoleSystem {
			n += conversation.EstimateTokens(m)
		}
	}
	return n
}

// budget is the input budget of the next request: context_tokens when the
// configuration sets it; otherwise from the window the server says it
// serves, or else the model's known window (or the smaller one a
// context-length refusal stated), less the tool definitions,
// which are sent with every request but are not in the conversation that
// fitContext fits.
func (c *Coordinator) budget(ctx context.Context, model string, tools []conversation.ToolDef) int {
	c.mu.Lock()
	configured, set, stated := c.opts.ContextTokens, c.contextSet, c.statedWindow
	c.mu.Unlock()
	if set {
		return configured
	}
	window := llm.ContextWindow(model)
	if sw, ok := c.opts.Model.(servedWindower); ok {
		if w := sw.ServedWindow(ctx, model); w > 0 {
			window = w
		}
	}
	if stated > 0 {
		window = min(window, stated)
	}
	return max(llm.InputBudget(window)-llm.EstimateTools(tools), window/4)
}

// modelStep streams one assistant turn. When cut short, the partial answer
// is kept in the conversation so a later "what were you doing?" has it.
func (c *Coordinator) modelStep(ctx context.Context) (llm.Response, *stopCause, error) {
	req, cut, err := c.modelRequest(ctx)
	if cut != nil || err != nil {
		return llm.Response{}, cut, err
	}
	var (
		resp llm.Response
		so   answerSoFar
	)
	cut = c.watch(ctx, func(ctx context.Context) {
		resp, err = c.opts.Model.Stream(ctx, req, func(d llm.Delta) { c.takeDelta(d, &so) })
	})
	if cut != nil {
		c.keepCutAnswer(req, &so, cut)
		return resp, cut, nil
	}
	if err == nil && resp.Reasoning != "" {
		c.emit(event.Event{Type: event.Thinking, Turn: c.turns, Text: resp.Reasoning})
	}
	return resp, nil, err
}

// modelRequest is the request of the next model turn: the tools (started
// first when they must be) and the conversation fitted to the model's
// input budget. A hard stop while it waits is the cut; a model whose
// server serves too small a context is the error.
func (c *Coordinator) modelRequest(ctx context.Context) (llm.Request, *stopCause, error) {
	model := c.ModelName()
	if p, ok := c.toolSet().(preparer); ok && p.Unprepared() {
		// Tools that must start first (MCP servers) start now, on the
		// first turn that needs them; a hard stop cuts the wait.
		if cut := c.watch(ctx, p.Prepare); cut != nil {
			return llm.Request{}, cut, nil
		}
	}
	tools := toolDefs(c.toolSet(), c.opts.Children != nil)
	// What the model is offered is its family's view of these (a family
	// leaves some out, apply_patch among them for most): the budget is
	// reckoned on that.
	offered := tools
	faces, _ := c.toolSet().(llm.ToolFaces)
	if faces != nil {
		offered, _ = faces.Offer(model, tools, nil)
	}
	// Learning the budget may ask the server what context it serves (a
	// question an Ollama whose native API hangs answers only at its time
	// limit); a hard stop cuts it as it cuts the request.
	var budget int
	var tooSmall error
	if cut := c.watch(ctx, func(ctx context.Context) {
		budget = c.budget(ctx, model, offered)
		if sc, ok := c.opts.Model.(servedChecker); ok {
			tooSmall = sc.CheckServed(ctx, model, c.fixedTokens(offered))
		}
	}); cut != nil {
		return llm.Request{}, cut, nil
	}
	if tooSmall != nil {
		return llm.Request{}, nil, tooSmall
	}
	// A refused message is left out before fitting, so its size does not
	// push older turns out of a request it is not part of.
	msgs, trimmed := fitContext(slices.DeleteFunc(c.Messages(), func(m conversation.Message) bool { return m.Refused != "" }), budget)
	if trimmed > 0 {
		c.logDecision(memory.DecisionRecord{Kind: "context_trim", Detail: fmt.Sprintf("trimmed or left out %s to fit %s", text.Counted(trimmed, "message", "messages"), text.Counted(budget, "token", "tokens")),
			Reason: fmt.Sprintf("the conversation is larger than the input budget of %d tokens (the model's window less its tools and its answer); the oldest tool output goes first, the system prompt and the latest turn stay", budget)})
	}
	req := llm.Request{Model: model, Messages: msgs, Tools: tools, CacheKey: c.opts.SessionID, NoWebSearch: !c.searches()}
	if sc := c.outputSchema(); sc != nil {
		req.Schema, req.Answer = sc.Wire(), c.answering
	}
	if faces != nil {
		// The model is offered the tools as its family was trained on
		// them, and its calls come back under ralph's names (the client
		// does both, for whichever model answers).
		req.Faces = faces
	}
	return req, nil, nil
}

// answerSoFar is what the answer in flight has sent: its text, and the
// rest, its reasoning and its tool calls' names, which a hard stop leaves
// counted as an estimate (llm.EstimateCut). A retry or a fallback starts
// it over, since the answer it held is given up.
type answerSoFar struct {
	partial, thought, called strings.Builder
}

// reset forgets the answer given up.
func (so *answerSoFar) reset() {
	so.partial.Reset()
	so.thought.Reset()
	so.called.Reset()
}

// takeDelta is one piece of the streamed answer: kept in so, and told as
// the event each kind of piece has (a retry, a fallback, a notice, a
// wait, reasoning, a provider's search, text).
func (c *Coordinator) takeDelta(d llm.Delta, so *answerSoFar) {
	if d.Retry != nil {
		so.reset()
		c.counts.retries++
		c.logError("retry", "", fmt.Sprintf("attempt %d failed (%s); retrying in %s", d.Retry.Attempt, d.Retry.Reason, d.Retry.Wait))
		// The event has its own copy of the client's types (the
		// contract does not import the client): a field added to
		// one and not the other fails this conversion to compile.
		retry := event.RetryInfo(*d.Retry)
		c.emit(event.Event{Type: event.Retry, Turn: c.turns, Retry: &retry})
	}
	if f := d.Fallback; f != nil {
		so.reset()
		fb := event.FallbackInfo(*f)
		c.fellBack(&fb)
	}
	if d.Notice != "" {
		// How the model is served changed (a model chat
		// completions refused moved to the Responses API): said
		// once, as a line every face shows, and recorded.
		c.warn("wire", d.Notice)
	}
	if w := d.Waiting; w != nil {
		c.emit(event.Event{Type: event.Waiting, Turn: c.turns, SilentMS: w.Silent.Milliseconds(),
			WaitLimitMS: w.Limit.Milliseconds(), ModelLoaded: w.Working})
	}
	if d.Reasoning != "" {
		so.thought.WriteString(d.Reasoning)
		c.emit(event.Event{Type: event.ThinkingDelta, Turn: c.turns, Text: d.Reasoning})
	}
	if d.ToolName != "" {
		so.called.WriteString(d.ToolName + " ")
	}
	if d.Search != nil {
		// The provider ran it: shown, never run or approved here.
		search := event.SearchInfo(*d.Search)
		c.emit(event.Event{Type: event.WebSearch, Turn: c.turns, Search: &search})
	}
	if d.Text != "" {
		so.partial.WriteString(d.Text)
		c.emit(event.Event{Type: event.TextDelta, Turn: c.turns, Text: d.Text})
	}
}

// keepCutAnswer keeps what a hard stop left of the answer: its usage,
// estimated, and its text in the conversation, marked as cut.
func (c *Coordinator) keepCutAnswer(req llm.Request, so *answerSoFar, cut *stopCause) {
	if so.partial.Len()+so.thought.Len()+so.called.Len() > 0 {
		// The server was answering: the prompt and what it sent
		// so far are spent, though the count it sends at the end
		// of its stream never came. The turn counts an estimate,
		// marked as one, rather than nothing.
		c.addUsage(llm.EstimateCut(req, so.partial.String()+so.called.String(), so.thought.String()))
	}
	if so.partial.Len() > 0 {
		text := so.partial.String() + "\n\n[answer cut short: " + cutReason(cut.it) + "]"
		c.appendMessages(conversation.Message{Role: conversation.RoleAssistant, Content: text})
		c.emit(event.Event{Type: event.AssistantCut, Turn: c.turns, Text: text})
	}
}

// unanswered ends the run when a turn brought no usable answer: one cut
// at the output limit or stopped by a content filter (its text is kept,
// its tool calls, whose arguments may be cut too, are not run), or one
// that said nothing at all. The last is not kept: an assistant message
// without content or tool calls is one servers refuse. The conversation
// stays valid, so the next message goes on from it.
func (c *Coordinator) unanswered(resp llm.Response) (event.Result, bool) {
	msg := resp.Message
	var err error
	subtype := event.SubtypeExecutionError
	switch {
	case resp.FinishReason == "length":
		subtype = event.SubtypeMaxTokens
		err = fmt.Errorf("%w (finish_reason \"length\")%s; raise --max-output-tokens (max_output_tokens in the config), or ask for less at a time",
			ErrMaxTokens, keptText(msg))
	case resp.FinishReason == "content_filter":
		err = fmt.Errorf("%w (finish_reason \"content_filter\")%s; rephrase the request", ErrContentFilter, keptText(msg))
		// The filter refused the person's message: it is set aside like a
		// request the endpoint refused, before the partial answer is kept.
		err = c.refuse(err, `finish_reason "content_filter"`)
	case msg.Empty():
		why := "without any text or tool call"
		if resp.Reasoning != "" {
			why = fmt.Sprintf("after reasoning (%d characters) without any text or tool call", len(resp.Reasoning))
		}
		err = fmt.Errorf("%w: it ended its turn %s (finish_reason %q); the session goes on, so send the message again or rephrase it",
			ErrEmptyTurn, why, resp.FinishReason)
	default:
		return event.Result{}, false
	}
	if msg.Content != "" {
		kept := conversation.Message{Role: conversation.RoleAssistant, Content: msg.Content}
		c.appendMessages(kept)
		c.emit(event.Event{Type: event.Assistant, Turn: c.turns, Text: kept.Content})
	}
	c.logError("model", "", err.Error())
	c.emit(event.Event{Type: event.Error, Text: err.Error()})
	return event.Result{Subtype: subtype, IsError: true, Err: err, Text: msg.Content}, true
}

func keptText(msg conversation.Message) string {
	if msg.Content == "" {
		return ""
	}
	return "; the partial answer is kept"
}

// Warn tells the person about something that went wrong beside the run
// without ending it (a checkpoint that could not be taken), and records
// it. It may be called from any goroutine.
func (c *Coordinator) Warn(text string) { c.warn("warning", text) }

// warn tells the person about something that went wrong without ending
// the run, and records it.
func (c *Coordinator) warn(kind, text string) {
	// Warn may be called from any goroutine, so the turn is read through
	// turnNow, never c.turns.
	turn := int(c.turnNow.Load())
	c.emit(DecisionEvent(memory.DecisionRecord{Kind: kind, Detail: text, Reason: "it went wrong beside the run, which goes on", Turn: turn}))
	c.emit(event.Event{Type: event.Warning, Turn: turn, Text: text})
}

// fellBack says that the turn goes to a fallback model: an event every
// face shows as a line, and a decision, as the model a turn is asked of is
// one.
func (c *Coordinator) fellBack(f *event.FallbackInfo) {
	c.logError("fallback", "", fmt.Sprintf("%s failed (%s); this turn goes to %s", f.From, f.Reason, f.To))
	c.emit(event.Event{Type: event.Fallback, Turn: c.turns, Fallback: f, Model: f.To})
	c.logDecision(memory.DecisionRecord{Kind: "fallback", Detail: fmt.Sprintf("the fallback model %s answers turn %d", f.To, c.turns),
		Reason: fmt.Sprintf("%s is overloaded or unavailable after its own retries (%s); the next turn asks it again", f.From, f.Reason)})
}
