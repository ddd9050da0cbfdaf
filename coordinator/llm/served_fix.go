package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Ollama's context is set in one of two places, and the fix is in the one
// that set it: the server's own default (OLLAMA_CONTEXT_LENGTH when it
// starts), or the model's Modelfile (PARAMETER num_ctx), which wins over
// the server's default, so raising the default would change nothing.

// agentContext is the context ralph suggests: enough for its prompt, the
// tools and some files.
const agentContext = 32768

// modelfileNumCtx is the num_ctx a model's Modelfile sets, or 0 when it
// sets none or the server does not say.
func (c *Client) modelfileNumCtx(ctx context.Context, model string) (int, bool) {
	root := strings.TrimSuffix(c.cfg.BaseURL, "/v1")
	var show struct {
		Parameters string `json:"parameters"`
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	if !c.getJSON(ctx, http.MethodPost, root+"/api/show", body, &show) {
		return 0, false
	}
	if m := numCtxRe().FindStringSubmatch(show.Parameters); m != nil {
		var n int
		if _, err := fmt.Sscan(m[1], &n); err == nil && n > 0 {
			return n, true
		}
	}
	return 0, true
}

// ollamaFix says how to give model a larger context on this Ollama.
func (c *Client) ollamaFix(ctx context.Context, model string) string {
	switch n, known := c.modelfileNumCtx(ctx, model); {
	case n > 0:
		return fmt.Sprintf("its Modelfile sets PARAMETER num_ctx %d, which wins over the server's default: raise it (PARAMETER num_ctx %d) and create the model again with ollama create", n, agentContext)
	case known:
		return fmt.Sprintf("that is the server's default: start Ollama with a larger one (OLLAMA_CONTEXT_LENGTH=%d ollama serve)", agentContext)
	}
	return fmt.Sprintf("start Ollama with a larger context (OLLAMA_CONTEXT_LENGTH=%d ollama serve, or PARAMETER num_ctx in a Modelfile)", agentContext)
}

// CheckServed fails, before anything is sent, a request whose fixed part
// (the system prompt and the tool definitions, need tokens) the context
// the server says it serves model with cannot hold: Ollama would cut it
// and answer something that has lost ralph's instructions. A window ralph
// only guessed (the model is not loaded yet) fails nothing.
func (c *Client) CheckServed(ctx context.Context, model string, need int) error {
	if !c.looksLikeOllama() {
		return nil
	}
	window, final := c.cachedWindow(model)
	if !final || window <= 0 || need <= window {
		return nil
	}
	return &Error{Kind: ErrContextTooLong, Config: true, Msg: fmt.Sprintf(
		"model %q at %s is served with a context of %d tokens, less than ralph's system prompt and tool definitions alone (about %d tokens), so ralph did not send it; %s",
		model, c.cfg.BaseURL, window, need, c.ollamaFix(ctx, model))}
}
