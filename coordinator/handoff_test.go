package coordinator

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// summaryModel answers every request with a fixed summary and keeps the
// request it was sent.
type summaryModel struct{ got llm.Request }

func (m *summaryModel) Stream(_ context.Context, req llm.Request, _ func(llm.Delta)) (llm.Response, error) {
	m.got = req
	return llm.Response{Message: conversation.Message{Role: conversation.RoleAssistant, Content: " ## Decisions\nnone \n"},
		Usage: conversation.Usage{InputTokens: 10, OutputTokens: 2}}, nil
}

// The summary request carries the conversation as text under the fixed
// headings, without the system prompt or tools, tool results cut short.
func TestSummarizeSendsTheConversationAsText(t *testing.T) {
	m := &summaryModel{}
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "SYSTEM-PROMPT"},
		{Role: conversation.RoleUser, Content: "fix the parser"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "1", Name: "read_file", Arguments: `{"path":"p.go"}`}}},
		{Role: conversation.RoleTool, ToolCallID: "1", Content: strings.Repeat("x", 5000)},
		{Role: conversation.RoleAssistant, Content: "fixed"},
	}
	summary, usage, err := Summarize(context.Background(), m, "m", 100000, msgs, "write docs")
	if err != nil || summary != "## Decisions\nnone" || usage.InputTokens != 10 {
		t.Fatalf("%q %+v %v", summary, usage, err)
	}
	if len(m.got.Messages) != 1 || len(m.got.Tools) != 0 {
		t.Fatalf("want one message and no tools: %+v", m.got)
	}
	text := m.got.Messages[0].Content
	for _, want := range []string{"## Decisions", "## Files", "## Open questions", "## What is next", "write docs", "fix the parser", `read_file] {"path":"p.go"}`, "[… 3000 more bytes]", "fixed"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the request lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "SYSTEM-PROMPT") {
		t.Fatal("the request carries the system prompt")
	}
}

// Handoff needs a session record to move on to.
func TestHandoffWithoutNextSession(t *testing.T) {
	c := New(Options{Model: &summaryModel{}, ModelName: "m"})
	if _, err := c.Handoff(context.Background(), ""); err == nil {
		t.Fatal("a coordinator without NextSession handed off")
	}
}

// An empty conversation has nothing to hand off, and nothing moves on.
func TestHandoffOfAnEmptyConversation(t *testing.T) {
	moved := false
	c := New(Options{Model: &summaryModel{}, ModelName: "m", System: "s", NextSession: func() (string, error) { moved = true; return "b", nil }})
	if _, err := c.Handoff(context.Background(), ""); err == nil || moved {
		t.Fatalf("an empty conversation was handed off: %v, moved %v", err, moved)
	}
}
