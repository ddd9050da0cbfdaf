package coordinator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// ErrNothingToCompact is returned by Compact when the conversation holds
// nothing to summarise: no message of the person's before the part kept.
var ErrNothingToCompact = errors.New("there is no conversation to compact yet")

// SummaryPrompt is what the model is asked when a conversation is
// summarised, for a hand-off, a merge or a compaction alike: fixed
// headings, so that the next session, the conversation going on from the
// summary, and the person find the same four things in every summary.
const SummaryPrompt = `Write a hand-off summary of the conversation below for a fresh session that will continue the work without seeing it. Use exactly these headings, in this order, and keep each short:

## Decisions
## Files
## Open questions
## What is next

Under Files, name each file read, changed or created and what happened to it. Say only what the conversation shows; write "none" under a heading with nothing to say. Answer with the summary alone.`

// Bounds of the text a summary is written from.
const (
	// toolResultLimit bounds each tool result: the head of an output
	// says what it was, and the model's own words around it say what
	// came of it.
	toolResultLimit = 2000
	// toolResultShort is what is left of a tool result when the
	// conversation is still too large for one request: the oldest are cut
	// to it first.
	toolResultShort = 200
)

// piece is one message of a conversation as the summariser's text.
type piece struct {
	text string
	tool bool // a tool result, which is cut before anything else is
}

func (p piece) tokens() int { return conversation.EstimateBytes(len(p.text)) }

// Summarize asks the model for a summary of msgs under SummaryPrompt's
// headings; focus, when given, says what matters from here (a hand-off's
// goal, /compact's focus). It is the one summariser: chat's /compact, the
// compaction after a context-length refusal, /handoff, `ralph handoff` and
// `ralph sessions merge` all go through it. The conversation goes as text
// in requests without tools, each fitted to budget (the window's input
// budget), so a conversation too large for the window can still be
// summarised; summaryChunks says how. It returns the summary and what its
// requests used.
func Summarize(ctx context.Context, model Model, modelName string, budget int, msgs []conversation.Message, focus string) (string, conversation.Usage, error) {
	prompt := SummaryPrompt
	if focus != "" {
		prompt += "\n\nWhat matters from here: " + focus + "\nSay what of this conversation matters to it."
	}
	var used conversation.Usage
	summary := ""
	overhead := conversation.EstimateBytes(len(prompt) + len(chunkNote))
	chunks := summaryChunks(summaryPieces(msgs), budget, overhead)
	for i, chunk := range chunks {
		req := prompt
		if summary != "" {
			// The summary so far has a quarter of the room (summaryChunks);
			// one longer than that is cut, about 3.5 bytes a token.
			req += fmt.Sprintf(chunkNote, text.Clip(summary, max(budget-overhead, 256)/4*3))
		}
		req += "\n\n<conversation>\n" + chunk + "</conversation>"
		resp, err := model.Stream(ctx, llm.Request{Model: modelName, Messages: []conversation.Message{{Role: conversation.RoleUser, Content: req}}}, nil)
		used = used.Add(resp.Usage)
		if err != nil {
			if len(chunks) > 1 {
				return "", used, fmt.Errorf("summarise the conversation (part %d of %d): %w", i+1, len(chunks), err)
			}
			return "", used, fmt.Errorf("summarise the conversation: %w", err)
		}
		summary = strings.TrimSpace(resp.Message.Content)
		if summary == "" {
			return "", used, errors.New("summarise the conversation: the model answered with an empty summary")
		}
	}
	return summary, used, nil
}

// chunkNote carries the summary of the earlier parts into the request for
// the next part of a conversation summarised in parts.
const chunkNote = "\n\nThe conversation is too long for one request, so it comes in parts. This is your summary of the parts before:\n\n<summary-so-far>\n%s\n</summary-so-far>\n\nWrite one summary, under the same headings, of those parts and the part below together."

// summaryPieces is a conversation as the summariser reads it: each message
// under its speaker, tool calls with their arguments, tool results cut to
// their head. The system prompt is left out (the next session has its
// own), and so is a message the endpoint refused: the model never read
// it, and it may be the very text too long for the window.
func summaryPieces(msgs []conversation.Message) []piece {
	var out []piece
	for _, m := range msgs {
		if m.Refused != "" || m.Role == conversation.RoleSystem {
			continue
		}
		if m.Role == conversation.RoleTool {
			out = append(out, piece{text: "[tool result]\n" + clipTool(m.Content, toolResultLimit) + "\n\n", tool: true})
			continue
		}
		var b strings.Builder
		if m.Content != "" {
			fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, m.Content)
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "[%s calls %s] %s\n\n", m.Role, tc.Name, tc.Arguments)
		}
		if b.Len() > 0 {
			out = append(out, piece{text: b.String()})
		}
	}
	return out
}

// clipTool cuts a tool result to its first n bytes, saying how much more
// there was.
func clipTool(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := text.Head(s, n)
	return head + fmt.Sprintf("\n[… %d more bytes]", len(s)-len(head))
}

// summaryChunks fits the conversation's pieces into requests of at most
// budget tokens, overhead of them the prompt's. In order, until it fits
// in one request: the oldest tool results are cut to toolResultShort
// bytes (what a command printed matters least once the model has said
// what came of it); then the conversation goes in consecutive parts, each
// summarised with the summary of the parts before (Summarize), so nothing
// said is dropped; a single message larger than a part is cut in the
// middle. Parts rather than leaving the oldest turns out: the oldest turns
// hold the task and the first decisions, which a summary must keep.
func summaryChunks(pieces []piece, budget, overhead int) []string {
	room := max(budget-overhead, 256)
	total := 0
	for _, p := range pieces {
		total += p.tokens()
	}
	for i := 0; i < len(pieces) && total > room; i++ {
		if !pieces[i].tool || len(pieces[i].text) <= toolResultShort+100 {
			continue
		}
		before := pieces[i].tokens()
		body := strings.TrimPrefix(pieces[i].text, "[tool result]\n")
		pieces[i].text = "[tool result]\n" + clipTool(body, toolResultShort) + "\n\n"
		total += pieces[i].tokens() - before
	}
	if total <= room {
		return []string{joinPieces(pieces)}
	}
	// A part leaves a quarter of the room for the summary so far.
	part := max(room*3/4, 128)
	var chunks []string
	var cur strings.Builder
	curTokens := 0
	for _, p := range pieces {
		t := p.text
		if conversation.EstimateBytes(len(t)) > part {
			// EstimateBytes counts about 3.5 bytes a token.
			t = text.ClipMiddle(t, part*3, func(n int) string {
				return fmt.Sprintf("\n[… %d bytes cut to fit the context window …]\n", n)
			})
		}
		n := conversation.EstimateBytes(len(t))
		if curTokens > 0 && curTokens+n > part {
			chunks = append(chunks, cur.String())
			cur.Reset()
			curTokens = 0
		}
		cur.WriteString(t)
		curTokens += n
	}
	if cur.Len() > 0 {
		chunks = append(chunks, cur.String())
	}
	return chunks
}

func joinPieces(pieces []piece) string {
	var b strings.Builder
	for _, p := range pieces {
		b.WriteString(p.text)
	}
	return b.String()
}

// Compacted is what a compaction did: the summary that took the
// conversation's place and the counts its event carries.
type Compacted struct {
	conversation.Compaction
	Summary string
}

// Compact summarises the conversation in place (chat's /compact): the
// conversation goes on in the same session from the system prompt, the
// summary and the last exchange, kept as it was when it is small (a
// quarter of the input budget at most) and something came before it.
// focus says what the summary should keep. Call it only while nothing
// runs.
func (c *Coordinator) Compact(ctx context.Context, focus string) (Compacted, error) {
	msgs := c.Messages()
	keep := lastExchange(msgs)
	budget := c.budget(ctx, c.ModelName(), nil)
	if keep < 0 || !Conversed(msgs[:keep]) || estimate(msgs[keep:]) > budget/4 {
		keep = len(msgs)
	}
	r, err := c.compact(ctx, msgs, keep, budget, conversation.CompactedByCommand, focus)
	// The transcript and the faces have the compaction before the
	// command says it is done, as they have a run's events when Run
	// returns.
	_ = c.opts.Events.Flush(context.WithoutCancel(ctx))
	return r, err
}

// compact replaces msgs[:keep] (save the system prompt) with a summary of
// them, written in requests fitted to budget: in memory, and in
// messages.jsonl by one mark line that LoadMessages applies
// (conversation.CompactionMark), so the file stays append-only and
// readable, the whole conversation before the mark stays in it for the
// person, and `ralph -c` reads the compacted one. It publishes
// conversation_compacted, which the transcript records.
func (c *Coordinator) compact(ctx context.Context, msgs []conversation.Message, keep, budget int, cause, focus string) (Compacted, error) {
	if !Conversed(msgs[:keep]) {
		return Compacted{}, ErrNothingToCompact
	}
	c.preCompact(ctx, cause, focus)
	model := c.ModelName()
	summary, usage, err := Summarize(ctx, c.opts.Model, model, budget, msgs[:keep], focus)
	c.spentBeside(usage)
	if err != nil {
		return Compacted{}, err
	}
	info := conversation.Compaction{Kept: len(msgs) - keep, BeforeTokens: estimate(msgs), Cause: cause, Focus: focus}
	mark := conversation.CompactionMark(SummaryContext("the conversation before this point was compacted", summary, focus)[0].Content, info)
	c.mu.Lock()
	if len(c.messages) != len(msgs) {
		c.mu.Unlock()
		return Compacted{}, errors.New("the conversation changed while it was being summarised; compact it again")
	}
	c.messages = conversation.Compact(c.messages, mark)
	info.AfterTokens = estimate(c.messages)
	mark.Compacted.AfterTokens = info.AfterTokens
	c.mu.Unlock()
	c.record(mark)
	why := "the person asked for it (/compact)"
	if cause == conversation.CompactedForContextLimit {
		why = "the endpoint refused the conversation as longer than the model's window"
	}
	c.logDecision(memory.DecisionRecord{Kind: "compact",
		Detail: fmt.Sprintf("summarised the conversation in place: about %d tokens before, %d after; the last %s kept as they were", info.BeforeTokens, info.AfterTokens, text.Counted(info.Kept, "message", "messages")),
		Reason: why})
	c.emit(event.Event{Type: event.ConversationCompacted, Turn: c.turns, Text: compactedLine(info, model), Output: summary, Compaction: &info})
	c.postCompact(ctx, cause, summary)
	c.compacted(ctx)
	return Compacted{Compaction: info, Summary: summary}, nil
}

// spentBeside counts what a request beside the conversation (a summary)
// used in the session's usage and saves it, so its cost is the session's
// in ralph status, /cost and the reports, as the conversation's own is.
func (c *Coordinator) spentBeside(u conversation.Usage) {
	c.addUsage(u)
	if c.opts.Store != nil {
		c.keep(c.opts.Store.SaveState(func(st *memory.State) { st.Usage, st.CostUSD = c.Usage(), c.cost() }))
	}
}

// compactedLine is the conversation_compacted event's words.
func compactedLine(info conversation.Compaction, model string) string {
	if info.Cause == conversation.CompactedForContextLimit {
		return fmt.Sprintf("the conversation was longer than model %q accepts: compacted it (about %d tokens to %d) and trying once more", model, info.BeforeTokens, info.AfterTokens)
	}
	return fmt.Sprintf("compacted the conversation: about %d tokens to %d", info.BeforeTokens, info.AfterTokens)
}

// estimate is the estimated size of the messages a request would carry.
func estimate(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Refused == "" {
			n += conversation.EstimateTokens(m)
		}
	}
	return n
}

// lastExchange is the index of the person's last message that was not
// refused, where the last exchange begins; -1 when there is none.
func lastExchange(msgs []conversation.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleUser && msgs[i].Refused == "" {
			return i
		}
	}
	return -1
}

// OversizedError is a context-length refusal of a message that alone is
// larger than a request may carry: compacting the conversation before it
// cannot make room for it, so ralph says so instead of trying.
type OversizedError struct {
	Tokens, Budget int
	Model          string
	Err            error // the endpoint's refusal
}

func (e *OversizedError) Error() string {
	return fmt.Sprintf("the message alone is about %d tokens, more than the %d a request to model %q can carry (its context window less room for the answer), so compacting the conversation cannot make room for it (the endpoint: %s)",
		e.Tokens, e.Budget, e.Model, llm.Refusal(e.Err))
}

func (e *OversizedError) Unwrap() error { return e.Err }

// compactForRetry handles a context-length refusal (err) once per
// message: when the person's unanswered message alone is larger than a
// request may carry, it returns an *OversizedError and nothing is tried;
// otherwise it compacts the conversation before the turn in flight and
// reports true, and the caller sends the request once more. It reports
// false with err, or with why compacting failed, when there is nothing to
// compact or the summary could not be written.
func (c *Coordinator) compactForRetry(ctx context.Context, err error) (bool, error) {
	if w := llm.StatedWindow(err); w > 0 {
		// The server said its window, and a refusal means ralph's idea
		// of it was too large: the oversize check, the summary's
		// requests and every later request go by the server's.
		c.mu.Lock()
		c.statedWindow = w
		c.mu.Unlock()
	}
	msgs := c.Messages()
	model := c.ModelName()
	budget := c.budget(ctx, model, toolDefs(c.toolSet(), c.opts.Children != nil))
	// The unanswered messages at the end: the message refused.
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == conversation.RoleUser && msgs[start-1].Refused == "" {
		start--
	}
	if n := estimate(msgs[start:]); start < len(msgs) && n > budget {
		return false, &OversizedError{Tokens: n, Budget: budget, Model: model, Err: err}
	}
	keep := start
	if keep == len(msgs) {
		// The refusal came after a tool result: the turn in flight is
		// kept from the person's message that began it.
		keep = max(lastExchange(msgs), 0)
	}
	if !Conversed(msgs[:keep]) {
		return false, err
	}
	if _, cerr := c.compact(ctx, msgs, keep, c.budget(ctx, model, nil), conversation.CompactedForContextLimit, ""); cerr != nil {
		c.logError("compact", "", cerr.Error())
		return false, fmt.Errorf("%w; compacting the conversation to make room failed too (%v)", err, cerr)
	}
	return true, nil
}
