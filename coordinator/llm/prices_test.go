package llm

import (
	"math"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestListPrice(t *testing.T) {
	for model, want := range map[string]Price{
		"gpt-4o-mini": {0.15, 0.60}, "gpt-4o-2024-08-06": {2.50, 10}, "openai/gpt-4.1-mini": {0.40, 1.60}, "o3": {2, 8},
		"gpt-5-codex": {1.25, 10}, "gpt-5-mini-2025-08-07": {0.25, 2}, "codex-mini-latest": {1.5, 6},
	} {
		if got, ok := ListPrice(model); !ok || got != want {
			t.Errorf("ListPrice(%q) = %v, %v", model, got, ok)
		}
	}
	for _, unknown := range []string{"qwen2.5-coder", "gpt-5.2", "o3x"} {
		if _, ok := ListPrice(unknown); ok {
			t.Errorf("the unknown model %s got a price", unknown)
		}
	}
	if c := (Price{2.5, 10}).Cost(conversation.Usage{InputTokens: 1000, OutputTokens: 500}); math.Abs(c-0.0075) > 1e-12 {
		t.Errorf("cost = %v", c)
	}
}
