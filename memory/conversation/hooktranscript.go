package conversation

import (
	"encoding/json"
	"time"
)

// Claude Code keeps a session's conversation as JSONL, one line per
// message (an assistant turn one line per content block), and hooks get
// its path as transcript_path: loop plugins read it for the last
// assistant message, loggers for the conversation. TranscriptLine is ralph's
// conversation in that line format, as Claude Code 2.1.197 writes it
// (testdata/claude-code-transcript/transcript.jsonl): the fields a hook
// reads, none of Claude Code's own bookkeeping.

// TranscriptLine is one line of a Claude Code transcript.
type TranscriptLine struct {
	ParentUUID *string `json:"parentUuid"`
	// IsSidechain is false: child agents are not in this transcript.
	IsSidechain bool              `json:"isSidechain"`
	Type        string            `json:"type"`
	Message     TranscriptMessage `json:"message"`
	// IsMeta marks a user line ralph wrote, not the person (a Stop
	// hook's reason); IsCompactSummary the summary a compaction left.
	IsMeta           bool   `json:"isMeta,omitempty"`
	IsCompactSummary bool   `json:"isCompactSummary,omitempty"`
	UUID             string `json:"uuid"`
	Timestamp        string `json:"timestamp"`
	UserType         string `json:"userType"`
	Cwd              string `json:"cwd"`
	SessionID        string `json:"sessionId"`
}

// TranscriptMessage is a line's message: a user's text (Content a string) or
// blocks (tool results; an assistant's text, tool_use or thinking).
type TranscriptMessage struct {
	ID         string `json:"id,omitempty"`
	Type       string `json:"type,omitempty"`
	Role       string `json:"role"`
	Model      string `json:"model,omitempty"`
	Content    any    `json:"content"`
	StopReason string `json:"stop_reason,omitempty"`
}

// TranscriptLines writes a conversation's messages as Claude Code's lines,
// each chained to the one before (parentUuid).
type TranscriptLines struct {
	SessionID, Cwd string
	// UUID makes a line's id (random, as Claude Code's are).
	UUID func() string
	last *string
	turn int
}

// Lines are m's lines, at now, for a session whose model is model; a
// system message has none (Claude Code keeps no system prompt there).
// meta says a user message is ralph's own words to the model.
func (w *TranscriptLines) Lines(m Message, model string, meta bool, now time.Time) []TranscriptLine {
	var out []TranscriptLine
	add := func(typ string, msg TranscriptMessage) *TranscriptLine {
		id := w.UUID()
		out = append(out, TranscriptLine{ParentUUID: w.last, Type: typ, Message: msg, UUID: id,
			Timestamp: now.UTC().Format("2006-01-02T15:04:05.000Z"), UserType: "external", Cwd: w.Cwd, SessionID: w.SessionID})
		w.last = &id
		return &out[len(out)-1]
	}
	block := func(b map[string]any) []map[string]any { return []map[string]any{b} }
	switch m.Role {
	case RoleUser:
		if m.Content == "" {
			return nil
		}
		l := add("user", TranscriptMessage{Role: RoleUser, Content: m.Content})
		l.IsMeta, l.IsCompactSummary = meta, m.Compacted != nil
	case RoleTool:
		add("user", TranscriptMessage{Role: RoleUser, Content: block(map[string]any{"tool_use_id": m.ToolCallID, "type": "tool_result", "content": m.Content})})
	case RoleAssistant:
		w.turn++
		stop := "end_turn"
		if len(m.ToolCalls) > 0 {
			stop = "tool_use"
		}
		msg := func(b map[string]any) TranscriptMessage {
			return TranscriptMessage{ID: "msg_ralph_" + w.SessionID + "_" + itoa(w.turn), Type: "message", Role: RoleAssistant, Model: model, Content: block(b), StopReason: stop}
		}
		for _, o := range m.Opaque {
			var b map[string]any
			if o.Provider == "anthropic" && json.Unmarshal(o.Block, &b) == nil {
				add("assistant", msg(b))
			}
		}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			add("assistant", msg(map[string]any{"type": "text", "text": m.Content}))
		}
		for _, c := range m.ToolCalls {
			var input any
			if json.Unmarshal([]byte(c.Arguments), &input) != nil {
				input = map[string]any{}
			}
			add("assistant", msg(map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input}))
		}
	}
	return out
}

// itoa is n in decimal.
func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
