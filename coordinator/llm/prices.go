package llm

import (
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/text"
)

// Price is what a model costs in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Cache price factors, of the input price, as the provider table has
// them (providers.CacheWriteFactor, CacheReadFactor).
const (
	cacheWriteFactor = providers.CacheWriteFactor
	cacheReadFactor  = providers.CacheReadFactor
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

// ListPrice returns the known list price of a model, from the provider
// table's (memory/providers).
func ListPrice(model string) (Price, bool) {
	p, ok := providers.ListPrice(model)
	return Price{Input: p.Input, Output: p.Output}, ok
}
