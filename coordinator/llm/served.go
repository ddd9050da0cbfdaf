package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// A local server may serve a model with less context than the model's own
// window, and cut a longer prompt silently, keeping its start and end
// (Ollama's log says "truncating input prompt limit=4096 prompt=28848").
// Its OpenAI-compatible layer cannot be told the context, but a native API
// beside it may say what it serves: the served dialects (dialects.go).
//
// ralph asks only a server that looks like one of them, so that a one-shot
// against any other server never waits for a probe: one on the port of
// the dialect's provider row, or one whose answers carried the dialect's
// system fingerprint. The answer is cached per endpoint and model for the
// process.

const (
	// probeTimeout bounds each question to the native API; a local server
	// answers in milliseconds.
	probeTimeout = 2 * time.Second
	// maxServedTries bounds how often an answer that is only a guess is
	// asked again (the model was not loaded yet).
	maxServedTries = 3
)

type servedEntry struct {
	mu     sync.Mutex
	window int
	final  bool // from /api/ps or num_ctx, not a guess
	tries  int
}

// servedCache holds what each endpoint serves each model, for the process.
var servedCache sync.Map // endpoint root + "\x00" + model → *servedEntry

// served is the dialect the endpoint looks like it speaks, worth asking,
// or nil: the one its answers showed, else the one its port says.
func (c *Client) served() *servedDialect {
	if d := c.dialect.Load(); d != nil {
		return d
	}
	return dialectByPort(c.cfg.BaseURL)
}

func (c *Client) servedKey(model string) string {
	return c.cfg.BaseURL + "\x00" + model
}

// ServedWindow is the context window, in tokens, the endpoint really
// serves model with, or 0 when it cannot tell (a server of no served
// dialect).
func (c *Client) ServedWindow(ctx context.Context, model string) int {
	d := c.served()
	if d == nil {
		return 0
	}
	v, _ := servedCache.LoadOrStore(c.servedKey(model), &servedEntry{})
	e := v.(*servedEntry)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.final || e.tries >= maxServedTries {
		return e.window
	}
	e.tries++
	if w, final := c.askServed(ctx, d, model); w > 0 {
		e.window, e.final = w, final
	}
	return e.window
}

// cachedWindow is what ServedWindow found, without asking, and whether
// the server said so (rather than ralph guessing).
func (c *Client) cachedWindow(model string) (int, bool) {
	if v, ok := servedCache.Load(c.servedKey(model)); ok {
		e := v.(*servedEntry)
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.window, e.final
	}
	return 0, false
}

// askServed asks the dialect's native API what it serves model with:
// the loaded model's context (final), else the model's own setting
// (final), else the dialect's default capped at the model's own window (a
// guess). It returns 0 when the server does not answer like the dialect.
func (c *Client) askServed(ctx context.Context, d *servedDialect, model string) (int, bool) {
	if n, loaded := c.loadedContext(ctx, d, model); loaded && n > 0 {
		return n, true
	}
	n, show, ok := c.showModel(ctx, d, model)
	switch {
	case !ok:
		return 0, false
	case n > 0:
		return n, true
	}
	w := d.defaultContext
	for k, v := range show.ModelInfo {
		if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && n > 0 {
			w = min(w, int(n))
		}
	}
	return w, false
}

// shownModel is the answer of a dialect's show request.
type shownModel struct {
	Parameters string         `json:"parameters"`
	ModelInfo  map[string]any `json:"model_info"`
}

// showModel asks the dialect's native API about model: the context its
// own settings give it (0: none), the whole answer, and whether the
// server answered.
func (c *Client) showModel(ctx context.Context, d *servedDialect, model string) (int, shownModel, bool) {
	var show shownModel
	body, _ := json.Marshal(map[string]string{"model": model})
	if !c.getJSON(ctx, http.MethodPost, d.root(c.cfg.BaseURL)+d.show, body, &show) {
		return 0, show, false
	}
	if m := d.numCtx().FindStringSubmatch(show.Parameters); m != nil {
		var n int
		if _, err := fmt.Sscan(m[1], &n); err == nil && n > 0 {
			return n, show, true
		}
	}
	return 0, show, true
}

// loadedContext asks the dialect's native API whether model is loaded,
// and with what context.
func (c *Client) loadedContext(ctx context.Context, d *servedDialect, model string) (int, bool) {
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if !c.getJSON(ctx, http.MethodGet, d.root(c.cfg.BaseURL)+d.loaded, nil, &ps) {
		return 0, false
	}
	for _, m := range ps.Models {
		if d.sameModel(m.Name, model) || d.sameModel(m.Model, model) {
			return m.ContextLength, true
		}
	}
	return 0, false
}

// getJSON makes one short request to the endpoint's native API and
// decodes a 200 answer into v.
func (c *Client) getJSON(ctx context.Context, method, u string, body []byte, v any) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	resp, err := c.sideRequest(ctx, method, u, body)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v) == nil
}

// sideRequest is a request beside the chat API (a probe, a question to a
// server's native API), authorised like the chat requests.
func (c *Client) sideRequest(ctx context.Context, method, u string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	return c.httpClient.Do(req)
}

// estimateRequest is the estimated size of a request's prompt: its
// messages as sent and its tool definitions.
func estimateRequest(req Request) int {
	n := 0
	for _, m := range sendable(req.Messages) {
		n += conversation.EstimateTokens(m)
	}
	return n + EstimateTools(req.Tools)
}

// EstimateTools is the estimated size of tool definitions in a prompt. It
// counts bytes rather than joining each definition's parts, because it is
// asked on every model call of every agent and joining allocated the whole
// tool list each time.
func EstimateTools(tools []conversation.ToolDef) int {
	n := 0
	for _, t := range tools {
		n += conversation.EstimateBytes(len(t.Name) + len(t.Description) + len(t.Parameters))
	}
	return n
}

// truncation reports, once per client, a prompt the server cut: one well
// over the context window the server says it serves, of which it read no
// more than the window (Ollama reports the prompt tokens it kept after
// cutting). A small count alone is no evidence: servers report only what
// their cache missed, or count their own way. A window ralph only guessed
// (the model was not loaded yet) is asked again, now that the request
// loaded it.
func (c *Client) truncation(ctx context.Context, req Request, read int) *Truncation {
	if read <= 0 || c.truncWarned.Load() {
		return nil
	}
	sent := estimateRequest(req)
	if sent < 1024 || read >= sent {
		return nil
	}
	window, final := c.cachedWindow(req.Model)
	d := c.served()
	if !final && d != nil {
		window = c.ServedWindow(ctx, req.Model)
	}
	cut := window > 0 && read <= window && sent > window+window/4
	if !cut || !c.truncWarned.CompareAndSwap(false, true) {
		return nil
	}
	t := &Truncation{Sent: sent, Read: read, Window: window}
	if d != nil {
		t.fix = c.servedFix(ctx, d, req.Model)
	}
	return t
}

// Sentence is the warning a person reads about a truncated prompt, with
// the fix.
func (t *Truncation) Sentence(model string) string {
	served := ""
	if t.Window > 0 {
		served = fmt.Sprintf(", it serves %q with a %d-token context", model, t.Window)
	}
	if t.fix != "" {
		return fmt.Sprintf("the model server cut the prompt: ralph sent about %d tokens and it read %d%s; %s; "+
			"or set context_tokens in the config below what it serves", t.Sent, t.Read, served, t.fix)
	}
	return fmt.Sprintf("the model server cut the prompt: ralph sent about %d tokens and it read %d%s; "+
		"start the server with a larger context, or set context_tokens in the config below what it serves", t.Sent, t.Read, served)
}
