package llm

import (
	"reflect"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestSendable(t *testing.T) {
	call := []conversation.ToolCall{{ID: "c1", Name: "list_files", Arguments: "{}"}}
	in := []conversation.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "task"},
		{Role: "user", Content: "[note]"},
		{Role: "assistant"},
		{Role: "user", Content: "again"},
		{Role: "assistant", Content: "partial"},
		{Role: "assistant", Content: "more", ToolCalls: call},
		{Role: "tool", ToolCallID: "c1", Content: "x"},
		{Role: "assistant", Content: "done"},
	}
	want := []conversation.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "task\n\n[note]\n\nagain"},
		{Role: "assistant", Content: "partial\n\nmore", ToolCalls: call},
		{Role: "tool", ToolCallID: "c1", Content: "x"},
		{Role: "assistant", Content: "done"},
	}
	if got := sendable(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("sendable =\n%+v\nwant\n%+v", got, want)
	}
	if in[1].Content != "task" {
		t.Fatal("sendable changed the saved history")
	}
}

func TestCompletionTokensField(t *testing.T) {
	for _, tt := range []struct {
		base, model string
		want        bool
	}{
		{"https://api.openai.com/v1", "gpt-4o", true},
		{"http://localhost:11434/v1", "qwen2.5-coder", false},
		{"https://openrouter.ai/api/v1", "openai/o3-mini", true},
		{"http://localhost:8000/v1", "gpt-5-mini", true},
	} {
		c := New(Config{BaseURL: tt.base})
		if got := completionTokensField(c, tt.model); got != tt.want {
			t.Errorf("%s %s: max_completion_tokens = %v", tt.base, tt.model, got)
		}
	}
}
