package llm

import (
	"context"
	"fmt"
)

// A served dialect's context may be set in more than one place (Ollama's:
// the server's own default, OLLAMA_CONTEXT_LENGTH when it starts, or the
// model's Modelfile, PARAMETER num_ctx, which wins over the server's
// default, so raising the default would change nothing): the fix is in
// the one that set it (servedDialect.fix).

// agentContext is the context ralph suggests: enough for its prompt, the
// tools and some files.
const agentContext = 32768

// servedFix says how to give model a larger context on this server.
func (c *Client) servedFix(ctx context.Context, d *servedDialect, model string) string {
	n, _, known := c.showModel(ctx, d, model)
	return d.fix(n, known)
}

// CheckServed fails, before anything is sent, a request whose fixed part
// (the system prompt and the tool definitions, need tokens) the context
// the server says it serves model with cannot hold: the server would cut it
// and answer something that has lost ralph's instructions. A window ralph
// only guessed (the model is not loaded yet) fails nothing.
func (c *Client) CheckServed(ctx context.Context, model string, need int) error {
	d := c.served()
	if d == nil {
		return nil
	}
	window, final := c.cachedWindow(model)
	if !final || window <= 0 || need <= window {
		return nil
	}
	return &Error{Kind: ErrContextTooLong, Config: true, Msg: fmt.Sprintf(
		"model %q at %s is served with a context of %d tokens, less than ralph's system prompt and tool definitions alone (about %d tokens), so ralph did not send it; %s",
		model, c.cfg.BaseURL, window, need, c.servedFix(ctx, d, model))}
}
