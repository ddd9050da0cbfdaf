package coordinator

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// setAside handles a failed request. When the endpoint refused it for
// what it carries (llm.Refusal), the person's unanswered message at the
// end of the conversation is marked refused, in memory and in
// messages.jsonl (which is only appended to, so a mark line follows it),
// and the returned error says, in the same sentence, that the message is
// set aside. Later requests leave it out, so one refusal no longer makes
// every later message fail with it. Any other failure returns err as it
// is: the message stays and is sent again, with the next, as before.
func (c *Coordinator) setAside(err error) error {
	reason := llm.Refusal(err)
	if reason == "" {
		return err
	}
	return c.refuse(err, reason)
}

// refuse marks the unanswered user messages at the end of the
// conversation refused for reason; err is returned unchanged when there
// are none (a refusal after a tool result is not of a person's message).
func (c *Coordinator) refuse(err error, reason string) error {
	c.mu.Lock()
	n := conversation.MarkRefused(c.messages, reason)
	var texts []string
	for _, m := range c.messages[len(c.messages)-n:] {
		texts = append(texts, m.Content)
	}
	c.mu.Unlock()
	if n == 0 {
		return err
	}
	c.record(conversation.RefusalMark(reason))
	text := strings.Join(texts, "\n\n")
	c.logDecision(memory.DecisionRecord{Kind: "message_refused", Detail: "set the refused message aside: later requests leave it out",
		Reason: fmt.Sprintf("the endpoint refused it (%s); sent again it would be refused again, and with every message after it", reason)})
	c.emit(event.Event{Type: event.MessageRefused, Turn: c.turns, Text: reason, Output: text})
	return fmt.Errorf("%w; the message is set aside and will not be sent again (/retry in the chat sends it again)", err)
}

// TakeRefused is the text of the last message the endpoint refused, for
// chat's /retry to send again as a new message; ok is false when no
// message was refused. The refused message itself stays in the
// conversation, marked, as the record of what happened.
func (c *Coordinator) TakeRefused() (text string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	end := -1
	for i := len(c.messages) - 1; i >= 0; i-- {
		if c.messages[i].Role == conversation.RoleUser && c.messages[i].Refused != "" {
			end = i
			break
		}
	}
	if end < 0 {
		return "", false
	}
	// A refused request may have carried several messages (one whose
	// request failed earlier and the next): they were refused together
	// and are sent again together.
	start := end
	for start > 0 && c.messages[start-1].Role == conversation.RoleUser && c.messages[start-1].Refused == c.messages[end].Refused {
		start--
	}
	var texts []string
	for _, m := range c.messages[start : end+1] {
		texts = append(texts, m.Content)
	}
	return strings.Join(texts, "\n\n"), true
}
