package conversation

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A conversation becomes Claude Code's lines: the prompt, one line per
// block of an answer, one per tool result, chained by parentUuid, with
// no line for the system prompt; the JSON is compact, so the loop
// plugins' grep '"role":"assistant"' finds the answers.
func TestTranscriptLinesAreClaudeCodes(t *testing.T) {
	n := 0
	w := &TranscriptLines{SessionID: "s1", Cwd: "/p", UUID: func() string { n++; return "u" + string(rune('0'+n)) }}
	msgs := []Message{
		{Role: RoleSystem, Content: "system"},
		{Role: RoleUser, Content: "write it"},
		{Role: RoleAssistant, Content: "I'll write it.", ToolCalls: []ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"a"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "wrote a"},
		{Role: RoleAssistant, Content: "Done."},
	}
	var got []string
	for _, m := range msgs {
		for _, l := range w.Lines(m, "m", false, time.Unix(0, 0)) {
			b, _ := json.Marshal(l)
			got = append(got, string(b))
		}
	}
	want := []string{
		`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"write it"},"uuid":"u1"`,
		`{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"id":"msg_ralph_s1_1","type":"message","role":"assistant","model":"m","content":[{"text":"I'll write it.","type":"text"}],"stop_reason":"tool_use"},"uuid":"u2"`,
		`{"parentUuid":"u2","isSidechain":false,"type":"assistant","message":{"id":"msg_ralph_s1_1","type":"message","role":"assistant","model":"m","content":[{"id":"c1","input":{"path":"a"},"name":"write_file","type":"tool_use"}],"stop_reason":"tool_use"},"uuid":"u3"`,
		`{"parentUuid":"u3","isSidechain":false,"type":"user","message":{"role":"user","content":[{"content":"wrote a","tool_use_id":"c1","type":"tool_result"}]},"uuid":"u4"`,
		`{"parentUuid":"u4","isSidechain":false,"type":"assistant","message":{"id":"msg_ralph_s1_2","type":"message","role":"assistant","model":"m","content":[{"text":"Done.","type":"text"}],"stop_reason":"end_turn"},"uuid":"u5"`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) || !strings.Contains(got[i], `"timestamp":"1970-01-01T00:00:00.000Z","userType":"external","cwd":"/p","sessionId":"s1"}`) {
			t.Errorf("line %d:\n%s\nwant it to start\n%s", i+1, got[i], want[i])
		}
	}
}
