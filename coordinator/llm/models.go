package llm

import "strings"

// contextWindows maps model name prefixes to their context windows in
// tokens. The first matching prefix wins, so longer prefixes come first.
// Unknown models get DefaultContextWindow, small enough for typical local
// servers; users with bigger windows set context_tokens in their config.
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

// bareModel is a model's name as ralph's tables of models match it: lower
// case, without any provider prefix ("openai/gpt-4o" is "gpt-4o").
func bareModel(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// DefaultContextWindow is assumed for models ralph does not know.
const DefaultContextWindow = 32_768

// ContextWindow returns the context window of a model, matching its name
// without any provider prefix ("openai/gpt-4o", "ollama/qwen2.5-coder").
func ContextWindow(model string) int {
	m := bareModel(model)
	for _, w := range contextWindows {
		if strings.HasPrefix(m, w.prefix) {
			return w.tokens
		}
	}
	return DefaultContextWindow
}

// InputBudget is how many tokens a request may use for its input, leaving
// room for the answer: a quarter of the window, at most 8,192 tokens.
func InputBudget(window int) int {
	return window - min(window/4, 8192)
}
