package models

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
)

// WithFallbacks gives the session's client its fallback models
// (fallback_models, --fallback-model; llm/fallback.go). A model of the
// session's own provider is asked at the session's endpoint. Another
// provider's, named "provider:model" or by a model name that is that
// provider's (claude-…, gemini-…), is asked at that provider's endpoint
// with its key, and only when the person named it (their own config or a
// flag, never a project's) and its key is set: a cloned repository must
// not send the person's other keys anywhere. The returned error is one
// sentence.
func WithFallbacks(c *llm.Client, fb config.Fallback, getenv func(string) string) (*llm.Client, error) {
	if err := fb.CheckFallbackModels(); err != nil {
		return nil, err
	}
	if len(fb.FallbackModels) == 0 {
		return c, nil
	}
	session := c.Provider()
	var chain []llm.Fallback
	for _, m := range fb.FallbackModels {
		p, model, other := fallbackProvider(m.Name, session)
		if !other {
			chain = append(chain, llm.Fallback{Model: model})
			continue
		}
		where := "the session's endpoint"
		if session != "" {
			where = session
		}
		if m.Project {
			return nil, fmt.Errorf("fallback model %q in the project's config (%s) is %s's, not %s's; a project may name fallback models of the session's own provider only, so put it in your own config (~/.config/ralph/config.toml) or give --fallback-model",
				m.Name, config.ProjectFile, p.Name, where)
		}
		keyEnv, key, bearer := p.Credentials(getenv)
		if key == "" && !p.Local {
			return nil, fmt.Errorf("fallback model %q is %s's, and %s is not set; set it, or leave the model out of fallback_models and --fallback-model",
				m.Name, p.Name, p.KeyEnv)
		}
		base := p.Endpoint(getenv)
		chain = append(chain, llm.Fallback{Model: model, Provider: p.Name,
			Client: c.ForProvider(p.Name, p.Protocol, base, keyEnv, key, bearer),
			Note: fmt.Sprintf("%s is %s's, not %s's: the prompt cache and the thinking signatures of this session do not carry over to it",
				model, p.Name, where)})
	}
	return c.WithFallbacks(fb.FallbackOnLimit, chain...), nil
}

// fallbackProvider reads a fallback entry: "provider:model" names the
// provider ("ollama:qwen2.5:7b" too, a model name may hold colons); a
// bare name is the provider's whose model names it has (claude-…) when
// the session has a provider, and the session's endpoint's otherwise (a
// gateway known by its URL serves any name). other says the provider is
// another than the session's.
func fallbackProvider(entry, session string) (p providers.Provider, model string, other bool) {
	model = entry
	if name, rest, ok := strings.Cut(entry, ":"); ok {
		if named, known := providers.Named(name); known && rest != "" {
			return named, rest, !strings.EqualFold(named.Name, session)
		}
	}
	if session == "" {
		return providers.Provider{}, model, false
	}
	if owner, ok := providers.ForModel(model); ok && !strings.EqualFold(owner.Name, session) {
		return owner, model, true
	}
	return providers.Provider{}, model, false
}
