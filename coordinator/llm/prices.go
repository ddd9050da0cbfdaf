package llm

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Price is what a model costs in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Cost is the price of a usage.
func (p Price) Cost(u conversation.Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output) / 1e6
}

// listPrices are OpenAI's published list prices for the models ralph
// knows, longest prefix first. Prices change: a user with other rates (or
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
}

// ListPrice returns the known list price of a model.
func ListPrice(model string) (Price, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
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
