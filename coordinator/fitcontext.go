package coordinator

import (
	"fmt"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// keepHead is how much of a trimmed tool output stays visible.
const keepHead = 400

// fitContext returns the conversation as it should be sent when it must
// fit in budget tokens (estimated with conversation.EstimateTokens). The saved
// history is never changed; only the request view is. In order, until it
// fits: old tool outputs are cut to their head (the oldest first, never
// those of the latest turn); then the oldest whole turns after the task are
// left out, with a note saying so; last, the largest remaining message is
// cut in the middle. System messages, the first user message (the task)
// and the latest turn are kept whole as long as anything else can go.
// It reports how many messages it trimmed or dropped.
func fitContext(msgs []conversation.Message, budget int) ([]conversation.Message, int) {
	total := 0
	for _, m := range msgs {
		total += conversation.EstimateTokens(m)
	}
	if total <= budget || len(msgs) == 0 {
		return msgs, 0
	}
	out := append([]conversation.Message(nil), msgs...)
	protect := protectedPrefix(out)
	latest := latestTurnStart(out)
	changed := 0

	// Phase 1: trim old tool outputs, oldest first.
	for i := protect; i < latest && total > budget; i++ {
		m := out[i]
		if m.Role != conversation.RoleTool || len(m.Content) <= keepHead+100 {
			continue
		}
		before := conversation.EstimateTokens(m)
		head := text.Head(m.Content, keepHead)
		m.Content = fmt.Sprintf("%s\n[… %d bytes of this tool output were trimmed to fit the context window]", head, len(m.Content)-len(head))
		out[i] = m
		total += conversation.EstimateTokens(m) - before
		changed++
	}

	// Phase 2: leave out the oldest turns after the task. A turn is an
	// assistant message with the tool results that answer it, or a user
	// message, so tool calls and results are never separated.
	dropped := 0
	for total > budget {
		start := protect
		if start >= latest {
			break
		}
		end := start + 1
		for end < latest && out[end].Role == conversation.RoleTool {
			end++
		}
		for _, m := range out[start:end] {
			total -= conversation.EstimateTokens(m)
		}
		dropped += end - start
		out = append(out[:start], out[end:]...)
		latest -= end - start
	}
	if dropped > 0 {
		note := conversation.Message{Role: conversation.RoleUser, Content: fmt.Sprintf(
			"[ralph: %d earlier messages were left out to fit the context window; the full history is in the session log]", dropped)}
		out = append(out[:protect], append([]conversation.Message{note}, out[protect:]...)...)
		total += conversation.EstimateTokens(note)
		changed += dropped
	}

	// Phase 3: a single huge message still does not fit: cut the largest.
	for total > budget {
		big, size := -1, 0
		for i, m := range out {
			if len(m.Content) > size && m.Role != conversation.RoleSystem {
				big, size = i, len(m.Content)
			}
		}
		if big < 0 || size < 200 {
			break
		}
		m := out[big]
		before := conversation.EstimateTokens(m)
		over := (total - budget) * 4
		keep := max(100, size-over-200)
		m.Content = text.ClipMiddle(m.Content, keep, func(n int) string {
			return fmt.Sprintf("\n[… %d bytes cut to fit the context window …]\n", n)
		})
		out[big] = m
		total += conversation.EstimateTokens(m) - before
		changed++
	}
	return out, changed
}

// protectedPrefix is the index after the system messages and the first
// user message.
func protectedPrefix(msgs []conversation.Message) int {
	i := 0
	for i < len(msgs) && msgs[i].Role == conversation.RoleSystem {
		i++
	}
	if i < len(msgs) && msgs[i].Role == conversation.RoleUser {
		i++
	}
	return i
}

// latestTurnStart is the index of the last assistant or user message that
// begins the most recent turn; everything from there on is kept.
func latestTurnStart(msgs []conversation.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleAssistant || msgs[i].Role == conversation.RoleUser {
			// A trailing user message belongs with the turn before it.
			if msgs[i].Role == conversation.RoleUser && i > 0 {
				for j := i - 1; j >= 0; j-- {
					if msgs[j].Role == conversation.RoleAssistant {
						return j
					}
					if msgs[j].Role == conversation.RoleUser {
						return i
					}
				}
			}
			return i
		}
	}
	return len(msgs)
}
