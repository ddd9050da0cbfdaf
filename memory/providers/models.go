package providers

import (
	"net/url"
	"strings"
)

// What ralph knows of models by their names, whoever serves them: context
// windows, list prices, which take images, the Messages API's output
// limits, which OpenAI models take max_completion_tokens and which search
// the web. These are facts of the providers that make the models, kept
// here beside the rows so that a new model or a changed price is one
// edit in one package; the model client (coordinator/llm) only asks.

// BareModel is a model's name as the tables of models match it: lower
// case, without any router's provider prefix ("openai/gpt-4o" is
// "gpt-4o").
func BareModel(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// contextWindows maps model name prefixes to their context windows in
// tokens. The first matching prefix wins, so longer prefixes come first.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1_000_000},
	{"gpt-5", 400_000},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4", 8_192},
	{"gpt-3.5", 16_385},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4", 200_000},
	{"claude", 200_000},
	{"gemini", 1_000_000},
	{"llama3.1", 128_000},
	{"llama3.2", 128_000},
	{"llama3.3", 128_000},
	{"llama-3", 128_000},
	{"qwen3", 40_960},
	{"qwen2.5", 32_768},
	{"deepseek", 64_000},
	{"mistral", 32_768},
	{"codestral", 256_000},
}

// ContextWindow is the context window of a model in tokens, by its name
// without any provider prefix, and false for a model the table does not
// know.
func ContextWindow(model string) (int, bool) {
	m := BareModel(model)
	for _, w := range contextWindows {
		if strings.HasPrefix(m, w.prefix) {
			return w.tokens, true
		}
	}
	return 0, false
}

// Price is what a model costs in US dollars per million tokens.
type Price struct {
	Input  float64
	Output float64
}

// Cache price factors, of the input price: Anthropic charges a prompt
// cache write (five-minute lifetime, the one ralph asks for) at 1.25 times
// the input price and a cache read at a tenth of it; OpenAI's automatic
// cache and Gemini's implicit one read at a tenth or a quarter and write
// at the input price, so a tenth is what ralph assumes for every read.
const (
	CacheWriteFactor = 1.25
	CacheReadFactor  = 0.1
)

// WebSearchPrice is what one of the provider's own web searches costs in
// US dollars: Anthropic's published $10 per 1,000 searches.
const WebSearchPrice = 10.0 / 1000

// listPrices are OpenAI's, Anthropic's and Google's published list prices
// (standard tier, prompts up to 200,000 tokens) for the models ralph
// knows, longest prefix first; a dated id (claude-sonnet-4-5-20250929)
// takes its model's price by the prefix rule. Prices change: a user with
// other rates (or another provider) sets input_price_per_mtok and
// output_price_per_mtok in the config, and an unknown model has no price,
// so its cost is reported as unknown (null) rather than guessed.
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
	m := BareModel(model)
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

// imageModels are the model name prefixes (without a provider's
// "vendor/" prefix) of the models known to accept images, by family: the
// first match wins, so a text-only member of a family that sees (o1-mini,
// o3-mini) comes before its family. A model not listed accepts none,
// which costs it a picture it could have seen, where the other mistake
// costs every request that carries one an error.
var imageModels = []struct {
	prefix string
	images bool
}{
	{"o1-mini", false},
	{"o1-preview", false},
	{"o3-mini", false},
	{"gpt-3.5", false},
	{"gpt-4o", true},
	{"gpt-4.1", true},
	{"gpt-4.5", true},
	{"gpt-4-turbo", true},
	{"gpt-4-vision", true},
	{"gpt-5", true},
	{"chatgpt-4o", true},
	{"codex", true},
	{"o1", true},
	{"o3", true},
	{"o4", true},
	{"claude-2", false},
	{"claude-instant", false},
	{"claude", true},
	{"gemini", true},
	{"gemma3", true},
	{"gemma-3", true},
	{"llava", true},
	{"bakllava", true},
	{"llama3.2-vision", true},
	{"llama-3.2-11b-vision", true},
	{"llama-3.2-90b-vision", true},
	{"llama4", true},
	{"llama-4", true},
	{"qwen2.5vl", true},
	{"qwen2.5-vl", true},
	{"qwen2-vl", true},
	{"qwen-vl", true},
	{"pixtral", true},
	{"mistral-small3.1", true},
	{"mistral-small-3.1", true},
	{"minicpm-v", true},
	{"moondream", true},
}

// AcceptsImages reports whether the model takes image parts, by its name
// without any provider prefix ("openai/gpt-4o", "ollama/llava").
func AcceptsImages(model string) bool {
	m := BareModel(model)
	for _, r := range imageModels {
		if strings.HasPrefix(m, r.prefix) {
			return r.images
		}
	}
	return false
}

// DefaultOutputTokens is the max_tokens ralph asks the Messages API for
// when neither the person nor OutputLimit says otherwise: a generous share
// of what a model may write, since the answer is billed by what is
// written, not by the limit.
const DefaultOutputTokens = 16384

// outputLimits are, by model name prefix (the first match wins), the
// max_tokens ralph asks for by default and the most the model takes
// (Anthropic's model overview); 0 for a limit ralph does not know.
var outputLimits = []struct {
	prefix     string
	def, limit int
}{
	{"claude-3-5", 8192, 8192},
	{"claude-3-7", DefaultOutputTokens, 64000},
	{"claude-3", 4096, 4096},
	{"claude-opus-4-0", DefaultOutputTokens, 32000},
	{"claude-opus-4-1", DefaultOutputTokens, 32000},
	{"claude-opus-4-2025", DefaultOutputTokens, 32000},
	{"claude-opus-4", DefaultOutputTokens, 64000},
	{"claude-sonnet-4", DefaultOutputTokens, 64000},
	{"claude-haiku-4", DefaultOutputTokens, 64000},
}

// OutputLimit is model's default max_tokens on the Messages API and the
// most it takes (0: not known).
func OutputLimit(model string) (def, limit int) {
	m := BareModel(model)
	for _, l := range outputLimits {
		if strings.HasPrefix(m, l.prefix) {
			return l.def, l.limit
		}
	}
	return DefaultOutputTokens, 0
}

// completionTokensModels are the OpenAI models (name prefixes) that refuse
// max_tokens and take max_completion_tokens instead, wherever they are
// served: the reasoning models and GPT-5.
var completionTokensModels = []string{"o1", "o3", "o4", "gpt-5"}

// TakesCompletionTokens reports whether a request to model at baseURL
// carries its output limit as max_completion_tokens: OpenAI's own
// endpoint (the openai row's host) takes it for every model, and its
// reasoning models and GPT-5 take only it wherever they are served.
func TakesCompletionTokens(baseURL, model string) bool {
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		if own, _ := Named("openai"); strings.EqualFold(u.Hostname(), hostname(own.BaseURL)) {
			return true
		}
	}
	m := BareModel(model)
	for _, p := range completionTokensModels {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// hostname is the host of a table's URL, "" for one that does not parse.
func hostname(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// SearchModel reports an OpenAI model that searches the web itself
// through chat completions (takes web_search_options): its name, behind a
// router's prefix, is a GPT's with "search" as a word
// (gpt-4o-search-preview, gpt-5-search-api).
func SearchModel(model string) bool {
	m := BareModel(model)
	if !strings.HasPrefix(m, "gpt-") {
		return false
	}
	for _, w := range strings.Split(m, "-") {
		if w == "search" {
			return true
		}
	}
	return false
}
