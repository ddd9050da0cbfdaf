package memory

import "github.com/ralph-dev/ralph/memory/conversation"

// Synthetic results given to tool calls that have none in a saved
// conversation, so it is valid to send again. Wording matters: the model
// must know whether to check before repeating a call.
const (
	ResultNotStarted = "not run: ralph stopped before this call started; run it again if it is still needed"
	ResultUncertain  = "unknown outcome: ralph was stopped (crash or kill) while this call ran, so it may or may not have taken effect; check its effect before repeating it"
)

// RepairHistory makes a saved conversation valid to send again: every tool
// call of an assistant message gets a result, placed right after that
// message's other results, and assistant messages that say nothing (no
// text, no tool calls), which older ralphs saved and Ollama refuses, are
// left out. started holds the ids of calls that had begun
// executing (from the event log). It returns the repaired conversation and
// the synthetic results that answer the last assistant message, which the
// caller appends to the log; gaps further back, which ralph's own writes
// never produce, are repaired in the returned view only.
func RepairHistory(msgs []conversation.Message, started map[string]bool) (repaired, appended []conversation.Message) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]conversation.Message, 0, len(msgs))
	lastAssistant := -1
	for i, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			lastAssistant = i
		}
	}
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Empty() {
			continue
		}
		out = append(out, m)
		if m.Role != conversation.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == conversation.RoleTool; j++ {
			answered[msgs[j].ToolCallID] = true
			out = append(out, msgs[j])
		}
		for _, c := range m.ToolCalls {
			if answered[c.ID] {
				continue
			}
			text := ResultNotStarted
			if started[c.ID] {
				text = ResultUncertain
			}
			syn := conversation.Message{Role: conversation.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: text}
			out = append(out, syn)
			if i == lastAssistant {
				appended = append(appended, syn)
			}
		}
		i = j - 1
	}
	return out, appended
}

// Unanswered reports whether some tool call of msgs has no result right
// after its assistant message: only then does RepairHistory need to know
// which calls had started, which the whole event log says, so a resume
// whose conversation is whole does not read that log (issue 94: continuing
// costs the same however long the session).
func Unanswered(msgs []conversation.Message) bool {
	for i := 0; i < len(msgs); i++ {
		if msgs[i].Role != conversation.RoleAssistant || len(msgs[i].ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == conversation.RoleTool; j++ {
			answered[msgs[j].ToolCallID] = true
		}
		for _, c := range msgs[i].ToolCalls {
			if !answered[c.ID] {
				return true
			}
		}
		i = j - 1
	}
	return false
}
