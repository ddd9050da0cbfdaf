package llm

import (
	"math"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestListPrice(t *testing.T) {
	for model, want := range map[string]Price{
		"gpt-4o-mini": {0.15, 0.60}, "gpt-4o-2024-08-06": {2.50, 10}, "openai/gpt-4.1-mini": {0.40, 1.60}, "o3": {2, 8},
	} {
		if got, ok := ListPrice(model); !ok || got != want {
			t.Errorf("ListPrice(%q) = %v, %v", model, got, ok)
		}
	}
	if _, ok := ListPrice("qwen2.5-coder"); ok {
		t.Error("an unknown model got a price")
	}
	if c := (Price{2.5, 10}).Cost(conversation.Usage{InputTokens: 1000, OutputTokens: 500}); math.Abs(c-0.0075) > 1e-12 {
		t.Errorf("cost = %v", c)
	}
}
