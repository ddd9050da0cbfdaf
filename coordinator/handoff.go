package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

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
		{Role: conversation.RoleAssistant, Content: conversation.SummaryAck},
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
	c.spentBeside(usage)
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
