// Package providers is the table of the model providers ralph knows by
// name: for each, the wire protocol it speaks, its base URL, the variables
// its key, endpoint and model are read from, its default model and the
// model names that belong to it; and what ralph knows of models by name
// (models.go: context windows, list prices, images, output limits, which
// edit tool and which token field a model takes). No other package spells
// these facts (TestProviderFactsLiveInTheTable). Configuration picks a row (--provider, `provider` in the config,
// or inference from the keys a person has); the model client reads only
// the protocol, URL and key the row resolved to; the sandbox hides every
// row's key variables from the commands ralph runs.
package providers

import (
	"strings"
)

// Wire protocols a provider speaks.
const (
	// ProtocolOpenAI is OpenAI's chat completions (POST /chat/completions).
	ProtocolOpenAI = "openai"
	// ProtocolAnthropic is Anthropic's Messages API (POST /v1/messages).
	ProtocolAnthropic = "anthropic"
	// ProtocolResponses is OpenAI's Responses API (POST /responses): no
	// provider's row names it, since OpenAI's endpoint speaks both its
	// APIs; the model client chooses it per model (Wire), or always when
	// the configuration names it (wire = "responses").
	ProtocolResponses = "responses"
)

// Provider is one row of the table.
type Provider struct {
	// Name is what --provider and `provider` in the config take.
	Name string
	// Protocol is the wire protocol (ProtocolOpenAI or ProtocolAnthropic).
	Protocol string
	// BaseURL is the endpoint when nothing else names one. For the
	// Messages API it is the host without /v1, as ANTHROPIC_BASE_URL is.
	BaseURL string
	// KeyEnv is the variable the key is read from; "" for a provider that
	// needs none (a local Ollama).
	KeyEnv string
	// TokenEnv, when set, is a variable whose value is sent as a bearer
	// token instead of KeyEnv's (ANTHROPIC_AUTH_TOKEN, as Claude Code
	// reads it, for proxies and other vendors' Anthropic endpoints).
	TokenEnv string
	// BaseURLEnv is the variable that overrides BaseURL, as the provider's
	// own tools read it (ANTHROPIC_BASE_URL); "" for none of its own.
	BaseURLEnv string
	// DefaultModel is the model used when none is named.
	DefaultModel string
	// ModelEnv, when set, is a variable of the provider's own tools that
	// names its model (ANTHROPIC_MODEL, as Claude Code reads it): it
	// stands in for DefaultModel, below any model ralph is given.
	ModelEnv string
	// ModelPrefixes are the model names that belong to this provider and
	// to no other: a model named so picks it when nothing else does.
	ModelPrefixes []string
	// Local: it runs on the person's machine and needs no key.
	Local bool
	// title is the provider's name as a sentence writes it (Title).
	title string
}

// table is every provider ralph knows, in the order ralph infers one from
// the keys present: OpenAI first, so that a person with several keys and
// nothing named keeps today's choice.
var table = []Provider{
	{Name: "openai", title: "OpenAI", Protocol: ProtocolOpenAI, BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY",
		DefaultModel: "gpt-4o-mini"},
	{Name: "anthropic", title: "Anthropic", Protocol: ProtocolAnthropic, BaseURL: "https://api.anthropic.com", KeyEnv: "ANTHROPIC_API_KEY",
		TokenEnv: "ANTHROPIC_AUTH_TOKEN", BaseURLEnv: "ANTHROPIC_BASE_URL", ModelEnv: "ANTHROPIC_MODEL",
		DefaultModel: "claude-sonnet-4-5", ModelPrefixes: []string{"claude-"}},
	{Name: "gemini", title: "Google", Protocol: ProtocolOpenAI, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", KeyEnv: "GEMINI_API_KEY",
		DefaultModel: "gemini-2.5-flash", ModelPrefixes: []string{"gemini-"}},
	{Name: "openrouter", title: "OpenRouter", Protocol: ProtocolOpenAI, BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY",
		DefaultModel: "anthropic/claude-sonnet-4.5"},
	{Name: "ollama", title: "Ollama", Protocol: ProtocolOpenAI, BaseURL: "http://localhost:11434/v1", Local: true,
		DefaultModel: "qwen2.5-coder"},
}

// Default is the provider of a configuration that names nothing and has
// no key, and whose key variable names the key of an endpoint known by
// its URL only: OpenAI's, as before there was a table.
func Default() Provider { return table[0] }

// ProtocolTitle is a wire protocol as a sentence names it ("Anthropic's
// Messages API"); "" is OpenAI's chat completions, as the model client
// takes it.
func ProtocolTitle(protocol string) string {
	switch protocol {
	case ProtocolAnthropic:
		return "Anthropic's Messages API"
	case ProtocolResponses:
		return "OpenAI's Responses API"
	}
	return "OpenAI's chat completions"
}

// API is the provider's wire protocol as a sentence names it.
func (p Provider) API() string { return ProtocolTitle(p.Protocol) }

// All returns every provider, in inference order.
func All() []Provider { return append([]Provider(nil), table...) }

// Names returns the names --provider takes.
func Names() []string {
	out := make([]string, len(table))
	for i, p := range table {
		out[i] = p.Name
	}
	return out
}

// Named returns the provider called name (case-insensitive).
func Named(name string) (Provider, bool) {
	for _, p := range table {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Provider{}, false
}

// ForModel returns the provider a model name belongs to ("claude-…" is
// Anthropic's), and false for a name any provider may serve.
func ForModel(model string) (Provider, bool) {
	m := strings.ToLower(model)
	for _, p := range table {
		for _, prefix := range p.ModelPrefixes {
			if strings.HasPrefix(m, prefix) {
				return p, true
			}
		}
	}
	return Provider{}, false
}

// EditsWithPatch reports whether model was trained on codex's patch
// format (OpenAI's GPT-5, codex and o-series models, gpt-oss): its tool
// family edits with apply_patch (FamilyOf). The name is matched as it is
// and without a router's vendor prefix ("openai/gpt-5" on OpenRouter).
func EditsWithPatch(model string) bool { return FamilyOf(model).Patches() }

// KeyVariables returns every variable any provider reads a key or token
// from: none of them may reach a process ralph starts for itself.
func KeyVariables() []string {
	var out []string
	for _, p := range table {
		for _, v := range []string{p.KeyEnv, p.TokenEnv} {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// Title is the provider's name as a sentence writes it ("the model
// claude-sonnet-4-5 is Anthropic's").
func (p Provider) Title() string {
	if p.title != "" {
		return p.title
	}
	return p.Name
}

// aliases are Claude Code's model aliases (sonnet, opus, haiku, as agent
// definitions and custom commands name them), by provider: the current
// model of that family where the provider serves Claude.
var aliases = map[string]map[string]string{
	"anthropic":  {"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1", "haiku": "claude-haiku-4-5"},
	"openrouter": {"sonnet": "anthropic/claude-sonnet-4.5", "opus": "anthropic/claude-opus-4.1", "haiku": "anthropic/claude-haiku-4.5"},
}

// IsAlias reports whether name is one of Claude Code's model aliases
// (sonnet, opus, haiku), whichever provider serves it.
func IsAlias(name string) bool {
	_, ok := aliases["anthropic"][strings.ToLower(strings.TrimSpace(name))]
	return ok
}

// ModelForAlias is the model a Claude Code alias means at provider, and
// false where the provider serves no such family (the child then keeps
// its parent's model).
func ModelForAlias(provider, alias string) (string, bool) {
	m, ok := aliases[strings.ToLower(provider)][strings.ToLower(strings.TrimSpace(alias))]
	return m, ok
}

// Credentials returns the key a provider's requests carry, from the
// provider's own variables: KeyEnv's value, or else TokenEnv's, which is
// sent as a bearer token (ANTHROPIC_AUTH_TOKEN, as Claude Code sends it).
// env names the variable the key came from, "" when neither is set. The
// session's configuration and a fallback model's client both read a
// provider's key here, so that they agree on which variable counts.
func (p Provider) Credentials(getenv func(string) string) (env, key string, bearer bool) {
	if p.KeyEnv != "" {
		if v := getenv(p.KeyEnv); v != "" {
			return p.KeyEnv, v, false
		}
	}
	if p.TokenEnv != "" {
		if v := getenv(p.TokenEnv); v != "" {
			return p.TokenEnv, v, true
		}
	}
	return "", "", false
}

// URLVariable is the variable that moves a provider's endpoint, as the
// provider's own tools read it: ANTHROPIC_BASE_URL, and OPENAI_BASE_URL
// for OpenAI's; "" for a provider without one.
func (p Provider) URLVariable() string {
	if p.BaseURLEnv == "" && p.Name == Default().Name {
		return OpenAIBaseURLEnv
	}
	return p.BaseURLEnv
}

// OpenAIBaseURLEnv is OpenAI's variable for its endpoint, which ralph
// also reads as the endpoint of any OpenAI-compatible server (a local
// Ollama, a gateway): so it is not the openai row's BaseURLEnv, which
// would make it OpenAI's alone, but the endpoint given for whichever
// provider speaks there.
const OpenAIBaseURLEnv = "OPENAI_BASE_URL"

// Endpoint is the provider's base URL: URLVariable's value when it is
// set, the table's otherwise.
func (p Provider) Endpoint(getenv func(string) string) string {
	if v := p.URLVariable(); v != "" && getenv(v) != "" {
		return getenv(v)
	}
	return p.BaseURL
}
