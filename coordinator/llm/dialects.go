package llm

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/providers"
)

// servedDialect is a model server's native API beside its OpenAI-compatible
// one, as far as ralph asks it (served.go): how a server is known to speak
// it, where it says which context it serves each model with, and how a
// person gives a model more. The code that asks reads these facts from
// the row; a further server with such an API (LM Studio's, llama.cpp's
// /props) is one more row and whatever its answers' shapes need.
type servedDialect struct {
	// provider is the provider row whose endpoint's port marks a server
	// of this dialect before it has answered (memory/providers).
	provider string
	// fingerprint is the system_fingerprint on its answers' chunks, which
	// marks it on any port.
	fingerprint string
	// layer is the path of its OpenAI-compatible API under its root.
	layer string
	// loaded lists (GET) the loaded models with the context each was
	// loaded with; show gives (POST {"model":…}) a model's parameters and
	// its own window.
	loaded, show string
	// numCtx finds the context a model's own settings give it in show's
	// parameters; compiled on first use, not at every start of ralph.
	numCtx func() *regexp.Regexp
	// defaultContext is what it serves a model that is not loaded and
	// has no setting of its own, on most machines; ralph assumes it until
	// the model is loaded and loaded says what it got.
	defaultContext int
	// tag is the tag a model name without one means.
	tag string
	// fix is how a person gives a model the context ralph suggests
	// (agentContext): setByModel is the context the model's own settings
	// give it (0: none), known whether the server said so.
	fix func(setByModel int, known bool) string
}

// dialects is every served dialect ralph knows.
var dialects = []servedDialect{{
	// Ollama serves a model with the context its server was started
	// with (OLLAMA_CONTEXT_LENGTH, or a model's num_ctx parameter), by
	// default 4096 tokens on a machine with less than 24 GiB of VRAM
	// (its docs/context-length.mdx). Its openai/openai.go sets the
	// fingerprint on every chunk; /api/ps lists loaded models with their
	// "context_length", /api/show gives a model's "parameters" (num_ctx,
	// when set) and "model_info" ("<arch>.context_length"). It names
	// "qwen2.5-coder" as "qwen2.5-coder:latest".
	provider: "ollama", fingerprint: "fp_ollama", layer: "/v1", loaded: "/api/ps", show: "/api/show",
	numCtx: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*num_ctx\s+(\d+)`) }), defaultContext: 4096, tag: ":latest",
	fix: func(setByModel int, known bool) string {
		switch {
		case setByModel > 0:
			return fmt.Sprintf("its Modelfile sets PARAMETER num_ctx %d, which wins over the server's default: raise it (PARAMETER num_ctx %d) and create the model again with ollama create", setByModel, agentContext)
		case known:
			return fmt.Sprintf("that is the server's default: start Ollama with a larger one (OLLAMA_CONTEXT_LENGTH=%d ollama serve)", agentContext)
		}
		return fmt.Sprintf("start Ollama with a larger context (OLLAMA_CONTEXT_LENGTH=%d ollama serve, or PARAMETER num_ctx in a Modelfile)", agentContext)
	},
}}

// dialectByFingerprint is the dialect whose answers carry fp, or nil.
func dialectByFingerprint(fp string) *servedDialect {
	for i := range dialects {
		if fp != "" && dialects[i].fingerprint == fp {
			return &dialects[i]
		}
	}
	return nil
}

// dialectByPort is the dialect whose provider's endpoint is on
// baseURL's port, or nil.
func dialectByPort(baseURL string) *servedDialect {
	u, err := url.Parse(baseURL)
	if err != nil || u.Port() == "" {
		return nil
	}
	for i := range dialects {
		p, _ := providers.Named(dialects[i].provider)
		if home, err := url.Parse(p.BaseURL); err == nil && home.Port() == u.Port() {
			return &dialects[i]
		}
	}
	return nil
}

// root is the server's root under baseURL: the base URL without the
// OpenAI layer's path.
func (d *servedDialect) root(baseURL string) string { return strings.TrimSuffix(baseURL, d.layer) }

// sameModel matches a loaded model's name with the one asked for, a name
// without a tag meaning the default tag.
func (d *servedDialect) sameModel(loaded, asked string) bool {
	return loaded != "" && (loaded == asked || loaded == asked+d.tag || asked == loaded+d.tag)
}
