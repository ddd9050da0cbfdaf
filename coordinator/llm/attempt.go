package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	openai "github.com/sashabaranov/go-openai"
)

// attempt makes one streaming request and assembles the answer. Every
// error it returns is a *failure the error table can read.
func (c *Client) attempt(ctx context.Context, req Request, slot *attemptSlot, emit func(Delta)) (Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stalled atomic.Bool
	var silentFor atomic.Int64
	stopWatch := c.watch(ctx, req.Model, slot, emit, func(limit time.Duration) {
		if limit > c.cfg.IdleTimeout {
			silentFor.Store(int64(limit))
		}
		stalled.Store(true)
		cancel()
	})
	defer stopWatch()
	fail := func(err error) (Response, error) {
		f := &failure{err: err, stalled: stalled.Load(), silentFor: time.Duration(silentFor.Load())}
		if f.stalled {
			return Response{}, f
		}
		status, body := slot.response()
		f.reached = status != 0
		switch se := slot.inStream(); {
		case status >= 400:
			f.status, f.server = status, parseErrorBody(body)
		case se != nil:
			f.status, f.inStream, f.server = status, true, *se
		case status == 200 && strings.HasPrefix(slot.contentType, "text/html"):
			f.status, f.server = status, serverError{shape: shapeHTML}
		}
		return Response{}, f
	}
	return c.wireOf(req.Model).attempt(ctx, c, req, slot, emit, fail, &stalled)
}

// attempt is one streamed request to chat completions through go-openai,
// assembled. fail and stalled are Client.attempt's.
func (w *chatWire) attempt(ctx context.Context, c *Client, req Request, slot *attemptSlot, emit func(Delta),
	fail func(error) (Response, error), stalled *atomic.Bool) (Response, error) {
	o := w.toOpenAI(c, req)
	if err := checkTools(o, req.Tools); err != nil {
		return fail(err)
	}
	// The messages are encoded here, and added to the body go-openai
	// builds without them (chatjson.go).
	msgs, err := encodeChatMessages(o.Messages)
	if err != nil {
		return fail(err)
	}
	o.Messages, slot.messages = nil, msgs
	if len(req.Tools) > 0 {
		tools, err := w.tools.encoded(req.Tools)
		if err != nil {
			return fail(err)
		}
		slot.tools = tools
	}
	slot.signatures = c.signatures(req.Messages)
	slot.webSearch = c.webSearch(req)
	stream, err := w.openAI(c).CreateChatCompletionStream(ctx, o)
	if err != nil {
		return fail(err)
	}
	defer stream.Close()
	a := newChatAnswer()
	for {
		// The raw line, decoded here rather than by go-openai's Recv, so
		// that the reasoning a thinking model streams is seen in order
		// with the text, whichever field carries it (chunk below).
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		var chunk streamChunk
		if err == nil {
			err = json.Unmarshal(raw, &chunk)
		}
		if err != nil {
			if ctx.Err() != nil && !stalled.Load() {
				return Response{}, err
			}
			return fail(fmt.Errorf("%w: %w", ErrBrokenStream, err))
		}
		a.add(c, chunk, emit)
	}
	if err := a.ended(slot); err != nil {
		return fail(err)
	}
	if a.citations > 0 {
		// OpenAI's search models say nothing of the searches they ran,
		// only which pages the answer cites: that is the line shown.
		emit(Delta{Search: &SearchInfo{Results: a.citations}})
	}
	return a.response(c, req), nil
}

// chatAnswer is a chat completions answer being assembled from its
// stream, chunk by chunk. It is its own type because the chunks feed
// several parts at once (text, reasoning, tool calls and their extra
// content, usage, citations) that are read together only at the end.
type chatAnswer struct {
	out       Response
	text      strings.Builder
	reasoning strings.Builder
	calls     []*conversation.ToolCall
	byIdx     map[int]*conversation.ToolCall
	extra     map[*conversation.ToolCall]json.RawMessage // a call's extra_content (signatures.go)
	usage     *openai.Usage
	citations int // a search model's url_citation annotations (websearch.go)
}

// newChatAnswer is an empty answer, the assistant's.
func newChatAnswer() *chatAnswer {
	a := &chatAnswer{byIdx: map[int]*conversation.ToolCall{}}
	a.out.Message.Role = conversation.RoleAssistant
	return a
}

// add takes one chunk into the answer, and tells the caller about the
// text, the reasoning and the tool names it carries as they arrive.
func (a *chatAnswer) add(c *Client, chunk streamChunk, emit func(Delta)) {
	if d := dialectByFingerprint(chunk.SystemFingerprint); d != nil {
		c.dialect.Store(d)
	}
	if chunk.Usage != nil {
		a.usage = chunk.Usage
	}
	for _, ch := range chunk.Choices {
		if r := ch.Delta.reasoning(); r != "" {
			a.reasoning.WriteString(r)
			emit(Delta{Reasoning: r})
		}
		if ch.Delta.Content != "" {
			a.text.WriteString(ch.Delta.Content)
			emit(Delta{Text: ch.Delta.Content})
		}
		a.citations += urlCitations(ch.Delta.Annotations)
		for _, tc := range ch.Delta.ToolCalls {
			a.addToolCall(tc, emit)
		}
		if ch.FinishReason != "" {
			a.out.FinishReason = ch.FinishReason
		}
	}
}

// addToolCall takes one fragment of a tool call into the call it
// belongs to, and tells the caller the call's name when it first comes.
func (a *chatAnswer) addToolCall(tc chunkToolCall, emit func(Delta)) {
	call := toolCallFor(tc.ToolCall, &a.calls, a.byIdx)
	if len(tc.ExtraContent) > 0 && string(tc.ExtraContent) != "null" {
		if a.extra == nil {
			a.extra = map[*conversation.ToolCall]json.RawMessage{}
		}
		a.extra[call] = tc.ExtraContent
	}
	if tc.ID != "" {
		call.ID = tc.ID
	}
	if tc.Function.Name != "" && call.Name == "" {
		// Some servers repeat the name in every fragment; the
		// first one is the name.
		call.Name = tc.Function.Name
		emit(Delta{ToolName: call.Name})
	}
	call.Arguments += tc.Function.Arguments
}

// ended is the error of a stream that ended without a whole answer: the
// server reported an error in it, or it stopped without a finish reason,
// or with the finish reason "error".
func (a *chatAnswer) ended(slot *attemptSlot) error {
	// An error event may come with or instead of a finish reason
	// (OpenRouter sends its error in a chunk with finish_reason "error").
	if slot.inStream() != nil {
		return fmt.Errorf("%w: the server reported an error", ErrBrokenStream)
	}
	switch a.out.FinishReason {
	case "":
		return fmt.Errorf("%w: the stream ended without a finish reason", ErrBrokenStream)
	case "error":
		return fmt.Errorf("%w: the server ended the answer with finish_reason \"error\"", ErrBrokenStream)
	}
	return nil
}

// response is the whole answer: its text, reasoning and tool calls (each
// with an id, made up where the server sent none), the calls' signatures,
// and the usage the server reported, or an estimate where it sent none.
func (a *chatAnswer) response(c *Client, req Request) Response {
	out := a.out
	out.Reasoning = a.reasoning.String()
	out.Message.Content = a.text.String()
	out.Constrained = req.Schema != nil
	for i, call := range a.calls {
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d", i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, *call)
	}
	if a.extra != nil {
		out.Message.Opaque = append(out.Message.Opaque, signatureBlocks(c.cfg.Provider, a.calls, a.extra)...)
	}
	if usage := a.usage; usage != nil {
		out.Usage = conversation.Usage{InputTokens: usage.PromptTokens, OutputTokens: usage.CompletionTokens}
		if d := usage.CompletionTokensDetails; d != nil {
			out.Usage.ReasoningTokens = d.ReasoningTokens
		}
		if d := usage.PromptTokensDetails; d != nil {
			// OpenAI's automatic prompt cache: part of prompt_tokens.
			out.Usage.CacheReadTokens = d.CachedTokens
		}
		out.read = usage.PromptTokens
	} else {
		out.Usage = estimateUsage(req, out.Message, out.Reasoning)
	}
	return out
}

// streamChunk is one chunk of a streamed answer: go-openai's fields that
// ralph reads, and the reasoning go-openai does not know. DeepSeek, vLLM
// and llama.cpp's server stream a thinking model's reasoning as
// "reasoning_content" (go-openai has that one), Ollama's /v1 layer and
// OpenRouter as "reasoning"; newer vLLM sends both with the same text.
type streamChunk struct {
	Choices []struct {
		Delta        chunkDelta `json:"delta"`
		FinishReason string     `json:"finish_reason"`
	} `json:"choices"`
	Usage             *openai.Usage `json:"usage"`
	SystemFingerprint string        `json:"system_fingerprint"`
}

type chunkDelta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []chunkToolCall `json:"tool_calls"`
	// Annotations are a search model's citations of the text
	// ({"type":"url_citation","url_citation":{…}}).
	Annotations []chunkAnnotation `json:"annotations"`
}

// chunkToolCall is a fragment of a tool call: go-openai's fields, and the
// extra content (Gemini's thought signature) go-openai drops.
type chunkToolCall struct {
	openai.ToolCall
	ExtraContent json.RawMessage `json:"extra_content"`
}

// reasoning is a delta's reasoning, from whichever field carries it, once.
func (d chunkDelta) reasoning() string {
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	return d.Reasoning
}

// toolCallFor finds or starts the call a tool-call fragment belongs to.
func toolCallFor(tc openai.ToolCall, calls *[]*conversation.ToolCall, byIdx map[int]*conversation.ToolCall) *conversation.ToolCall {
	if tc.Index != nil {
		call := byIdx[*tc.Index]
		if call == nil {
			call = &conversation.ToolCall{}
			byIdx[*tc.Index] = call
			*calls = append(*calls, call)
		}
		return call
	}
	// Some servers omit the index: a fragment with a new id, or a name
	// when the last call has one, starts a call; anything else continues
	// the last call.
	n := len(*calls)
	if n > 0 {
		last := (*calls)[n-1]
		newCall := (tc.ID != "" && tc.ID != last.ID) || (tc.ID == "" && tc.Function.Name != "" && last.Name != "")
		if !newCall {
			return last
		}
	}
	call := &conversation.ToolCall{}
	*calls = append(*calls, call)
	return call
}

// estimateUsage stands in for the usage a server did not report (it
// ignored stream_options, or refused it), marked as an estimate so that
// nobody takes it for the server's count.
func estimateUsage(req Request, answer conversation.Message, reasoning string) conversation.Usage {
	u := conversation.Usage{Estimated: true, OutputTokens: conversation.EstimateTokens(answer), InputTokens: estimateRequest(req)}
	if reasoning != "" {
		u.ReasoningTokens = conversation.EstimateTokens(conversation.Message{Content: reasoning})
		u.OutputTokens += u.ReasoningTokens
	}
	return u
}

// EstimateCut is the usage of an answer cut short by a hard stop while
// it streamed: the server has read the prompt and written what arrived
// (text, reasoning, the tool calls' words), but sends its count only at
// the end of a stream (stream_options include_usage), which a stopped
// stream never reaches. It is estimated from the request and the
// characters received, and marked so.
func EstimateCut(req Request, received, reasoning string) conversation.Usage {
	return estimateUsage(req, conversation.Message{Role: conversation.RoleAssistant, Content: received}, reasoning)
}

// watch is the idle watchdog of one attempt: it tells the caller about a
// silence longer than WaitNotice, about once a second, and again when data
// flows after it; and it calls stall once the silence reaches its limit:
// IdleTimeout, or longer for a local model that has not begun its answer
// (silenceLimit). The returned stop ends it.
func (c *Client) watch(ctx context.Context, model string, slot *attemptSlot, emit func(Delta), stall func(limit time.Duration)) (stop func()) {
	tick := min(max(c.cfg.IdleTimeout/20, 10*time.Millisecond), 250*time.Millisecond)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(tick)
		defer t.Stop()
		var told time.Duration // the silence last reported, in whole seconds
		var p patience
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			silent := slot.silence()
			limit, working := c.silenceLimit(ctx, model, slot, silent, &p)
			switch {
			case silent >= limit:
				stall(limit)
				return
			case silent >= c.cfg.WaitNotice:
				if s := silent.Truncate(time.Second); s != told && s > 0 {
					told = s
					w := &WaitInfo{Silent: s, Working: working}
					if limit > c.cfg.IdleTimeout {
						w.Limit = limit
					}
					emit(Delta{Waiting: w})
				}
			case told > 0:
				told = 0
				emit(Delta{Waiting: &WaitInfo{}})
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
