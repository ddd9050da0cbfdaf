package llmtest

// The wire types below are written by hand rather than reusing go-openai's
// structs, so that the JSON matches what OpenAI itself sends (for example
// "finish_reason": null on every chunk but the last, and "choices": [] on
// the usage chunk) instead of whatever go-openai's omitempty tags produce.

type wireUsage struct {
	PromptTokens            int              `json:"prompt_tokens"`
	CompletionTokens        int              `json:"completion_tokens"`
	TotalTokens             int              `json:"total_tokens"`
	CompletionTokensDetails *tokenBreakdown  `json:"completion_tokens_details,omitempty"`
	PromptTokensDetails     *promptBreakdown `json:"prompt_tokens_details,omitempty"`
	// cacheRead and cacheWrite are the prompt tokens read from and
	// written to the prompt cache, for the APIs that report them apart.
	cacheRead, cacheWrite int
}

// promptBreakdown is OpenAI's account of the cached part of a prompt.
type promptBreakdown struct {
	CachedTokens int `json:"cached_tokens"`
}

type tokenBreakdown struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

type wireChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *wireUsage    `json:"usage,omitempty"`
	// SystemFingerprint is "fp_ollama" in the ollama flavor, as Ollama
	// sends on every chunk.
	SystemFingerprint string `json:"system_fingerprint,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireCompletion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   wireUsage          `json:"usage"`
}

type completionChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type wireMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Function functionDelta `json:"function"`
}
