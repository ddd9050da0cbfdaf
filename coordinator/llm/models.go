package llm

import "github.com/ralph-dev/ralph/memory/providers"

// bareModel is a model's name as ralph's tables of models match it: lower
// case, without any provider prefix ("openai/gpt-4o" is "gpt-4o").
func bareModel(model string) string { return providers.BareModel(model) }

// DefaultContextWindow is assumed for models ralph does not know, small
// enough for typical local servers; users with bigger windows set
// context_tokens in their config.
const DefaultContextWindow = 32_768

// ContextWindow returns the context window of a model, matching its name
// without any provider prefix ("openai/gpt-4o", "ollama/qwen2.5-coder")
// in the provider table's list (memory/providers), DefaultContextWindow
// for a model it does not know.
func ContextWindow(model string) int {
	if n, ok := providers.ContextWindow(model); ok {
		return n
	}
	return DefaultContextWindow
}

// InputBudget is how many tokens a request may use for its input, leaving
// room for the answer: a quarter of the window, at most 8,192 tokens.
func InputBudget(window int) int {
	return window - min(window/4, 8192)
}
