package llm

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// Price is what a model costs in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Cache price factors, of the input price: Anthropic charges a prompt
// cache write (five-minute lifetime, the one ralph asks for) at 1.25 times
// the input price and a cache read at a tenth of it; OpenAI's automatic
// cache and Gemini's implicit one read at a tenth or a quarter and write
// at the input price, so a tenth is what ralph assumes for every read.
const (
	cacheWriteFactor = 1.25
	cacheReadFactor  = 0.1
)

// Cost is the price of a usage: the prompt tokens read from the cache at
// a tenth of the input price, those written to it at 1.25 times, the rest
// of InputTokens (which counts all three) at the input price, and the
// provider's web searches at WebSearchPrice each, whatever the tokens'
// price.
func (p Price) Cost(u conversation.Usage) float64 {
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	in := float64(plain) + cacheWriteFactor*float64(u.CacheWriteTokens) + cacheReadFactor*float64(u.CacheReadTokens)
	return text.RoundUSD((in*p.Input+float64(u.OutputTokens)*p.Output)/1e6 + float64(u.WebSearches)*WebSearchPrice)
}

// Saved is what prompt caching saved on a usage: what its cached tokens
// would have cost at the input price less what they cost. Writes cost
// more than that, so a usage that only wrote to the cache saved less than
// nothing; reads make up for it from the next request on.
func (p Price) Saved(u conversation.Usage) float64 {
	cached := float64(u.CacheReadTokens + u.CacheWriteTokens)
	paid := cacheWriteFactor*float64(u.CacheWriteTokens) + cacheReadFactor*float64(u.CacheReadTokens)
	return text.RoundUSD((cached - paid) * p.Input / 1e6)
}

// listPrices are OpenAI's, Anthropic's and Google's published list prices
// (standard tier, prompts up to 200,000 tokens) for the models ralph
// knows, longest prefix first; a dated id (claude-sonnet-4-5-20250929)
// takes its model's price by the prefix rule. Prices change: a user with other rates (or
// another provider) sets input_price_per_mtok and output_price_per_mtok in
// the config, and an unknown model has no price, so its cost is reported as
// unknown (null) rather than guessed.
var listPrices = []struct {
	prefix string
	price  Price
}{
	{"gpt-5-nano", Price{0.05, 0.40}},
	{"gpt-5-mini", Price{0.25, 2.00}},
	{"gpt-5.1", Price{1.25, 10.00}},
	{"gpt-5", Price{1.25, 10.00}}, // gpt-5-codex too
	{"codex-mini", Price{1.50, 6.00}},
	{"gpt-4.1-nano", Price{0.10, 0.40}},
	{"gpt-4.1-mini", Price{0.40, 1.60}},
	{"gpt-4.1", Price{2.00, 8.00}},
	{"gpt-4o-mini", Price{0.15, 0.60}},
	{"gpt-4o", Price{2.50, 10.00}},
	{"o4-mini", Price{1.10, 4.40}},
	{"o3-mini", Price{1.10, 4.40}},
	{"o3", Price{2.00, 8.00}},
	// OpenRouter spells the versions with a dot (anthropic/claude-sonnet-4.5).
	{"claude-opus-4-1", Price{15.00, 75.00}},
	{"claude-opus-4.1", Price{15.00, 75.00}},
	{"claude-sonnet-4.5", Price{3.00, 15.00}},
	{"claude-haiku-4.5", Price{1.00, 5.00}},
	{"claude-opus-4", Price{15.00, 75.00}},
	{"claude-sonnet-4-5", Price{3.00, 15.00}},
	{"claude-sonnet-4", Price{3.00, 15.00}},
	{"claude-haiku-4-5", Price{1.00, 5.00}},
	{"claude-3-7-sonnet", Price{3.00, 15.00}},
	{"claude-3-5-sonnet", Price{3.00, 15.00}},
	{"claude-3-5-haiku", Price{0.80, 4.00}},
	{"gemini-2.5-flash-lite", Price{0.10, 0.40}},
	{"gemini-2.5-flash", Price{0.30, 2.50}},
	{"gemini-2.5-pro", Price{1.25, 10.00}},
}

// ListPrice returns the known list price of a model.
func ListPrice(model string) (Price, bool) {
	m := bareModel(model)
	for _, p := range listPrices {
		// The prefix must end where a name part ends: gpt-5 prices
		// gpt-5-codex and gpt-5-2025-08-07, not gpt-5.2, whose price ralph
		// does not know.
		if rest, ok := strings.CutPrefix(m, p.prefix); ok && (rest == "" || strings.ContainsRune("-:@", rune(rest[0]))) {
			return p.price, true
		}
	}
	return Price{}, false
}
