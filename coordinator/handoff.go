package coordinator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// SummaryPrompt is what the model is asked when a session is summarised
// for a hand-off or a merge: fixed headings, so that the next session (and
// the person) find the same four things in every summary.
const SummaryPrompt = `Write a hand-off summary of the conversation below for a fresh session that will continue the work without seeing it. Use exactly these headings, in this order, and keep each short:

## Decisions
## Files
## Open questions
## What is next

Under Files, name each file read, changed or created and what happened to it. Say only what the conversation shows; write "none" under a heading with nothing to say. Answer with the summary alone.`

// toolResultLimit bounds each tool result in the conversation a summary is
// written from: the head of an output says what it was, and the model's
// own words around it say what came of it.
const toolResultLimit = 2000

// Summarize asks the model for a summary of msgs under SummaryPrompt's
// headings (goal, when given, says what the next session is for). The
// conversation goes as text in one request without tools, fitted to the
// input budget by the one rule every request is fitted by, so a session
// whose context is full can still be summarised. It returns the summary
// and what the request used.
func Summarize(ctx context.Context, model Model, modelName string, budget int, msgs []conversation.Message, goal string) (string, conversation.Usage, error) {
	prompt := SummaryPrompt
	if goal != "" {
		prompt += "\n\nThe next session's goal: " + goal + "\nSay what of this conversation matters to it."
	}
	overhead := conversation.EstimateTokens(conversation.Message{Role: conversation.RoleUser, Content: prompt}) + 64
	fitted, _ := memory.FitContext(msgs, max(budget-overhead, budget/2))
	req := llm.Request{Model: modelName, Messages: []conversation.Message{
		{Role: conversation.RoleUser, Content: prompt + "\n\n<conversation>\n" + renderForSummary(fitted) + "</conversation>"},
	}}
	resp, err := model.Stream(ctx, req, nil)
	if err != nil {
		return "", conversation.Usage{}, fmt.Errorf("summarise the session: %w", err)
	}
	summary := strings.TrimSpace(resp.Message.Content)
	if summary == "" {
		return "", resp.Usage, errors.New("summarise the session: the model answered with an empty summary")
	}
	return summary, resp.Usage, nil
}

// renderForSummary writes a conversation as plain text for the model to
// summarise: the system prompt left out (the next session has its own),
// each message under its speaker, tool calls with their arguments and
// tool results cut to their head. A message the endpoint refused is left
// out: the model never read it, and it may be the very text too long for
// the window.
func renderForSummary(msgs []conversation.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Refused != "" {
			continue
		}
		switch m.Role {
		case conversation.RoleSystem:
			continue
		case conversation.RoleTool:
			content := m.Content
			if len(content) > toolResultLimit {
				content = content[:toolResultLimit] + fmt.Sprintf("\n[… %d more bytes]", len(content)-toolResultLimit)
			}
			fmt.Fprintf(&b, "[tool result]\n%s\n\n", content)
			continue
		}
		if m.Content != "" {
			fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, m.Content)
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "[%s calls %s] %s\n\n", m.Role, tc.Name, tc.Arguments)
		}
	}
	return b.String()
}

// SummaryContext is the pair of messages that puts another session's
// summary into a conversation: the summary as context under a note that
// says where it comes from, and a short acknowledgement, so the
// conversation goes on with the person's next message and its roles still
// alternate (strict chat templates refuse two user messages in a row).
// what says what happened ("this session continues session X").
func SummaryContext(what, summary, goal string) []conversation.Message {
	text := fmt.Sprintf("[ralph: %s on %s. That conversation is not here; this summary of it, written by the model then, is.]\n\n%s",
		what, time.Now().UTC().Format("2006-01-02 15:04 UTC"), summary)
	if goal != "" {
		text += "\n\nThe goal from here: " + goal
	}
	return []conversation.Message{
		{Role: conversation.RoleUser, Content: text},
		{Role: conversation.RoleAssistant, Content: "Understood: I have the summary above and go on from it."},
	}
}

// Conversed reports whether msgs hold a conversation to summarise: a
// message of the person's, beyond the system prompt.
func Conversed(msgs []conversation.Message) bool {
	for _, m := range msgs {
		if m.Role == conversation.RoleUser {
			return true
		}
	}
	return false
}

// Handoff is what a hand-off did.
type Handoff struct {
	From, To string // the session handed off and the new one
	Summary  string
}

// Handoff summarises the conversation (Summarize) and goes on in a new
// session record that starts with the system prompt and the summary
// (SummaryContext) instead of the conversation: chat's /handoff and
// `ralph handoff`. The summary's cost is the old session's. Linking the
// two records is the caller's (it owns the project's files). Call it only
// while nothing runs; it needs NextSession.
func (c *Coordinator) Handoff(ctx context.Context, goal string) (Handoff, error) {
	if c.opts.NextSession == nil {
		return Handoff{}, errors.New("this conversation has no session record to hand off from")
	}
	from := c.SessionID()
	if !Conversed(c.Messages()) {
		return Handoff{}, errors.New("there is no conversation to hand off yet")
	}
	model := c.ModelName()
	summary, usage, err := Summarize(ctx, c.opts.Model, model, c.budget(ctx, model, nil), c.Messages(), goal)
	c.addUsage(usage)
	if c.opts.Store != nil {
		c.keep(c.opts.Store.SaveState(func(st *memory.State) { st.Usage, st.CostUSD = c.Usage(), c.cost() }))
	}
	if err != nil {
		return Handoff{}, err
	}
	reason := "the person asked for it (/handoff)"
	if goal != "" {
		reason += "; the next session's goal: " + goal
	}
	to, err := c.moveOn(memory.DecisionRecord{Kind: "handoff", Detail: "handed the conversation off to a new session with a summary of it",
		Reason: reason, By: memory.DecidedByPerson})
	if err != nil {
		return Handoff{}, err
	}
	c.appendMessages(SummaryContext("this session continues session "+from+", handed off", summary, goal)...)
	return Handoff{From: from, To: to, Summary: summary}, nil
}
