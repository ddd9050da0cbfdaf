package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// TestClaudeInputReadsTheSDKsLines: Claude Code's stream-json input as
// its Agent SDK writes it: the initialize control request is answered,
// any other refused in its answer; each user message is a prompt, its
// text blocks joined and any other block said on stderr; a line that is
// no JSON, or a kind ralph does not take, is said and left out.
func TestClaudeInputReadsTheSDKsLines(t *testing.T) {
	in := strings.Join([]string{
		`{"request_id":"r1","type":"control_request","request":{"subtype":"initialize","systemPrompt":[""]}}`,
		`{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"text","text":"say hi"}]},"parent_tool_use_id":null}`,
		``,
		`not json`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}}`,
		`{"type":"control_request","request_id":"r2","request":{"subtype":"interrupt"}}`,
		`{"type":"assistant","message":{}}`,
		`{"type":"user","message":{"role":"user","content":"plain"}}`,
		`{"type":"keep_alive"}`,
	}, "\n")
	var mu sync.Mutex
	var replies []string
	var notes []string
	r := readClaudeInput(strings.NewReader(in), func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		replies = append(replies, string(b))
		mu.Unlock()
	}, func(s string) {
		mu.Lock()
		notes = append(notes, s)
		mu.Unlock()
	})
	var prompts []string
	for {
		p, ok := r.next(context.Background())
		if !ok {
			break
		}
		prompts = append(prompts, p)
	}
	if strings.Join(prompts, "|") != "say hi|a\n\nb|plain" {
		t.Errorf("prompts = %q", prompts)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(replies) != 2 ||
		!strings.HasPrefix(replies[0], `{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{`) ||
		!strings.Contains(replies[1], `"subtype":"error","request_id":"r2","error":"ralph does not take the control request \"interrupt\"`) {
		t.Errorf("replies = %q", replies)
	}
	want := []string{"line 4 of standard input is no JSON object", `on line 5 had a block of type "image"`, `line 7 of standard input is a message of type "assistant"`}
	if len(notes) != len(want) {
		t.Fatalf("notes = %q", notes)
	}
	for i, w := range want {
		if !strings.Contains(notes[i], w) {
			t.Errorf("note %d = %q, want %q in it", i, notes[i], w)
		}
	}
}
