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

func TestListPriceOfClaudeAndGemini(t *testing.T) {
	for model, want := range map[string]Price{
		"claude-opus-4-1": {15, 75}, "claude-opus-4-1-20250805": {15, 75}, "claude-sonnet-4-5": {3, 15},
		"claude-sonnet-4-5-20250929": {3, 15}, "claude-haiku-4-5": {1, 5}, "claude-3-5-haiku-20241022": {0.8, 4},
		"anthropic/claude-sonnet-4.5": {3, 15}, "gemini-2.5-pro": {1.25, 10}, "gemini-2.5-flash": {0.30, 2.50},
		"gemini-2.5-flash-lite": {0.10, 0.40}, "gemini-2.5-flash-preview-09-2025": {0.30, 2.50},
	} {
		if got, ok := ListPrice(model); !ok || got != want {
			t.Errorf("ListPrice(%q) = %v, %v, want %v", model, got, ok, want)
		}
	}
}

// The cached parts of a prompt are priced apart: writes at 1.25 times the
// input price, reads at a tenth; Saved is what they would have cost at
// the input price less what they cost.
func TestCostAndSavedWithCache(t *testing.T) {
	p := Price{Input: 3, Output: 15}
	u := conversation.Usage{InputTokens: 10_000, OutputTokens: 1_000, CacheReadTokens: 8_000, CacheWriteTokens: 1_000}
	// 1,000 plain + 1,250 for the writes + 800 for the reads = 3,050 at $3.
	if c, want := p.Cost(u), (3_050*3.0+1_000*15.0)/1e6; math.Abs(c-want) > 1e-12 {
		t.Errorf("cost = %v, want %v", c, want)
	}
	// 9,000 cached tokens at $3 = 0.027, less the 2,050 paid = 0.02085.
	if s, want := p.Saved(u), (9_000-2_050)*3.0/1e6; math.Abs(s-want) > 1e-12 {
		t.Errorf("saved = %v, want %v", s, want)
	}
	if s := p.Saved(conversation.Usage{InputTokens: 100, OutputTokens: 10}); s != 0 {
		t.Errorf("a usage without cache saved %v", s)
	}
	if s := p.Saved(conversation.Usage{InputTokens: 2_000, CacheWriteTokens: 2_000}); s >= 0 {
		t.Errorf("a usage that only wrote to the cache saved %v, want less than nothing", s)
	}
}
