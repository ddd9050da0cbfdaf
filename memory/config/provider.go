package config

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/text"
)

// resolveState is what the sources said about the provider (the one
// named, if any), kept so that
// Resolve can run again after the flags: which source named the provider
// and whether it was the project's file; whether a base URL, a model or
// api_key_env was given, and by what; what Resolve last chose, so that a
// later change is seen as given; a model whose provider's key is missing;
// and the environment read.
type resolveState struct {
	provider              string
	providerFrom          string
	providerFromProject   bool
	baseURLGiven          bool
	baseURLWhy, keyEnvWhy string
	urlFromOpenAIEnv      bool
	openAIEnvURL          string
	modelGiven            bool
	keyEnvGiven           bool
	resolvedModel         string
	resolvedBaseURL       string
	modelNeedsKey         string
	getenv                func(string) string
	// alias is a Claude Code alias (opus) the model was given as, and
	// aliasModel the model it was mapped to, so that Resolve maps again
	// from the alias (another provider may map it otherwise).
	alias, aliasModel string
}

// ProviderNames is the list of provider names for a person: "openai,
// anthropic, gemini, openrouter or ollama".
func ProviderNames() string {
	names := providers.Names()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// setProvider names the provider from a source the person controls (a
// flag, the environment, a run a worker takes); why says which
// ("--provider anthropic"). Resolve then takes it. Apply is its door, so
// that every source names a provider by the same rules.
func (c *Config) setProvider(name, why string) {
	c.Provider, c.src.provider = name, name
	c.src.providerFrom = why
	c.src.providerFromProject = false
}

// SetModel sets the model from a source the person controls; Resolve
// keeps it rather than taking the provider's default.
func (c *Config) SetModel(m string) {
	c.Model = m
	c.src.modelGiven = true
}

// NamesEndpoint reports whether the configuration names its endpoint or
// its key's variable itself (a base URL from a file, OPENAI_BASE_URL or a
// flag; api_key_env): a provider carried from elsewhere (a run on
// Temporal) must not change where that key goes.
func (c *Config) NamesEndpoint() bool { return c.endpointGiven() }

// endpointGiven reports whether something names the endpoint or the key's
// variable: a base URL (flag, OPENAI_BASE_URL, a config file) or
// api_key_env. Then ralph keeps to today's path and infers nothing.
func (c *Config) endpointGiven() bool { return c.urlGiven() || c.src.keyEnvGiven }

// urlGiven reports whether a base URL was given: by a config file,
// OPENAI_BASE_URL or a flag (SetBaseURL), or written over what Resolve
// chose since.
func (c *Config) urlGiven() bool { return c.src.baseURLGiven || c.BaseURL != c.src.resolvedBaseURL }

// Resolve picks the provider and, from it, the protocol, the endpoint,
// the key's variable, the key and the default model. It is idempotent and
// starts each time from what the sources said, so that Load can resolve a
// configuration nobody puts flags over and the one place that applies
// flags (the project's overrides) resolves again after them. The order:
//   - a provider named (--provider, RALPH_PROVIDER, provider in a config
//     file) is taken, with its base URL, key and model unless those are
//     given too;
//   - a base URL or api_key_env given anywhere keeps today's path, the
//     OpenAI protocol at that endpoint;
//   - else a model that belongs to a provider (claude-…, gemini-…) picks
//     it; ANTHROPIC_BASE_URL picks Anthropic at that URL, as Claude Code
//     reads it; and otherwise the first provider, in the table's order,
//     whose key is set: OpenAI first, so several keys keep today's choice.
//
// An unknown provider's name is an error matching ErrInvalid.
func (c *Config) Resolve() error {
	if c.src.alias != "" && c.Model == c.src.aliasModel {
		c.Model = c.src.alias
	}
	if err := c.resolve(); err != nil {
		return err
	}
	if err := c.mapAlias(); err != nil {
		return err
	}
	if err := c.checkNames(); err != nil {
		return err
	}
	c.withholdFromProjectEndpoint()
	return nil
}

// checkNames refuses a model name that holds control characters, from
// whatever source: no model is called so, and a name goes to terminals
// (`ralph config`, doctor, the status line) and into requests.
func (c *Config) checkNames() error {
	names := append([]string{c.Model, c.src.provider}, c.fallbackNames()...)
	for _, n := range names {
		if text.StripControls(n) != n {
			return invalidf("the model or provider name %q holds control characters, which no model's name has; check --model, RALPH_MODEL and the config files", n)
		}
	}
	return nil
}

// withholdFromProjectEndpoint keeps the person's key from an endpoint a
// project's config chose on this machine. Validate refuses one on another
// host; one on the loopback is let through, since a local server needs
// no key, but it gets none: whatever listens there is not known to be the
// person's, and a cloned repository could name it.
func (c *Config) withholdFromProjectEndpoint() {
	c.KeyWithheld = false
	if !c.BaseURLFromProject || c.APIKey == "" || sameEndpoint(c.BaseURL, c.userBaseURL) {
		return
	}
	if u, err := url.Parse(c.BaseURL); err == nil && IsLoopbackURL(u) {
		c.APIKey, c.KeyWithheld = "", true
	}
}

// resolve is Resolve before the checks.
func (c *Config) resolve() error {
	getenv := c.src.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	// OPENAI_BASE_URL's endpoint, which a provider named other than
	// OpenAI's set aside last time, unless something wrote over it since.
	if c.src.urlFromOpenAIEnv && c.BaseURL == c.src.resolvedBaseURL {
		c.BaseURL = c.src.openAIEnvURL
		c.src.resolvedBaseURL = c.BaseURL
	}
	// A field written over what Resolve chose last (by a flag, or a
	// worker's carried settings) counts as given from now on.
	if c.BaseURL != c.src.resolvedBaseURL && !c.src.baseURLGiven {
		c.src.baseURLGiven, c.src.baseURLWhy = true, "--base-url is given"
	}
	if c.Model != c.src.resolvedModel {
		c.src.modelGiven = true
	}
	modelGiven := c.src.modelGiven
	c.Protocol, c.Bearer, c.src.modelNeedsKey = providers.ProtocolOpenAI, false, ""
	var p providers.Provider
	switch {
	case c.src.provider != "":
		named, ok := providers.Named(c.src.provider)
		if !ok {
			c.Provider = c.src.provider
			return invalidf("%s names the provider %q, which ralph does not know; use one of %s", c.src.providerFrom, c.src.provider, ProviderNames())
		}
		p, c.ProviderWhy = named, c.src.providerFrom
	case c.endpointGiven():
		c.Provider, c.Protocol = "", providers.ProtocolOpenAI
		if !c.src.keyEnvGiven {
			c.APIKeyEnv = providers.Default().KeyEnv
		}
		if !c.urlGiven() {
			// api_key_env alone: OpenAI's endpoint, as before.
			c.Provider, c.BaseURL = providers.Default().Name, DefaultBaseURL
		}
		c.ProviderWhy = c.endpointWhy() + ", so ralph keeps to that endpoint"
		c.APIKey = getenv(c.APIKeyEnv)
		c.settle(modelGiven, DefaultModel)
		return nil
	default:
		p, c.ProviderWhy = c.infer(getenv, modelGiven)
	}
	c.Provider, c.Protocol = p.Name, p.Protocol
	// OPENAI_BASE_URL is OpenAI's own variable: another provider named
	// goes to its own endpoint, not there (a flag or a config file's
	// base_url is the person's word for any provider).
	urlGiven := c.urlGiven() && !(c.src.urlFromOpenAIEnv && p.Name != providers.Default().Name)
	if !urlGiven {
		// Not OPENAI_BASE_URL here: OpenAI's own endpoint variable was
		// read above, when it counts as given.
		c.BaseURL = p.BaseURL
		if p.BaseURLEnv != "" {
			c.BaseURL = p.Endpoint(getenv)
		}
		c.src.resolvedBaseURL = c.BaseURL
	}
	if c.src.keyEnvGiven {
		c.APIKey = getenv(c.APIKeyEnv)
	} else {
		// The provider's key, or its bearer token (ANTHROPIC_AUTH_TOKEN,
		// as Claude Code sends it, for a proxy or another vendor's
		// Anthropic endpoint).
		var env string
		env, c.APIKey, c.Bearer = p.Credentials(getenv)
		c.APIKeyEnv = cmp.Or(env, p.KeyEnv)
	}
	if c.APIKeyEnv == "" {
		// A provider without a key (a local Ollama): the variable ralph
		// would have read stays named for messages.
		c.APIKeyEnv = providers.Default().KeyEnv
	}
	model := p.DefaultModel
	if p.ModelEnv != "" {
		if m := strings.TrimSpace(getenv(p.ModelEnv)); m != "" {
			// The provider's own tools' variable for its model
			// (ANTHROPIC_MODEL, Claude Code's): in place of the
			// provider's default, below any model ralph was given.
			model = m
		}
	}
	c.settle(modelGiven, model)
	return nil
}

// mapAlias maps Claude Code's model aliases (opus, sonnet, haiku) to the
// current model of that family, as Claude Code does, where the provider
// serves Claude (providers.ModelForAlias); elsewhere the alias would go
// to the endpoint as written and fail there, so it is refused in one
// sentence instead.
func (c *Config) mapAlias() error {
	c.src.alias, c.src.aliasModel = "", ""
	if !providers.IsAlias(c.Model) {
		return nil
	}
	m, ok := providers.ModelForAlias(c.Provider, c.Model)
	if !ok {
		where := c.BaseURL
		if c.Provider != "" {
			where = "the " + c.Provider + " provider at " + c.BaseURL
		}
		return invalidf("the model %q is Claude Code's alias for an Anthropic model, which ralph maps to a model id only with the anthropic or openrouter provider, not %s (%s); name the model as that endpoint serves it with --model, or choose --provider anthropic",
			c.Model, where, c.ProviderWhy)
	}
	c.src.alias, c.src.aliasModel = c.Model, m
	c.Model = m
	return nil
}

// settle takes the provider's default model unless one is given, and
// remembers what Resolve chose, so that a later change (a flag) is seen
// as given.
func (c *Config) settle(modelGiven bool, model string) {
	if !modelGiven {
		c.Model = model
	}
	c.src.resolvedModel = c.Model
	if !c.src.baseURLGiven {
		c.src.resolvedBaseURL = c.BaseURL
	}
}

// infer picks a provider from the model's name and the keys present, and
// says why in one sentence.
func (c *Config) infer(getenv func(string) string, modelGiven bool) (providers.Provider, string) {
	hasKey := func(p providers.Provider) string {
		env, _, _ := p.Credentials(getenv)
		return env
	}
	if modelGiven {
		if p, ok := providers.ForModel(c.Model); ok {
			if v := hasKey(p); v != "" {
				return p, fmt.Sprintf("the model %s is %s's and %s is set", c.Model, p.Title(), v)
			}
			c.src.modelNeedsKey = p.Name
			return p, fmt.Sprintf("the model %s is %s's", c.Model, p.Title())
		}
	}
	for _, p := range providers.All() {
		// A provider's own endpoint variable (ANTHROPIC_BASE_URL, as
		// Claude Code reads it) picks that provider.
		if p.BaseURLEnv != "" && getenv(p.BaseURLEnv) != "" {
			return p, p.BaseURLEnv + " is set and nothing else names an endpoint, so ralph speaks " + p.API() + " there"
		}
	}
	var set []string
	var first providers.Provider
	for _, p := range providers.All() {
		if v := hasKey(p); v != "" {
			if len(set) == 0 {
				first = p
			}
			set = append(set, v)
		}
	}
	switch len(set) {
	case 0:
		p := providers.Default()
		return p, "no provider's key is set and nothing names a provider: " + p.Title() + ", as before"
	case 1:
		return first, "only " + set[0] + " is set"
	}
	if first.Name == providers.Default().Name {
		return first, fmt.Sprintf("%s keys are set and nothing names a provider: %s, as before", count(len(set)), first.Title())
	}
	return first, fmt.Sprintf("%s are set and nothing names a provider: %s, the first of them in ralph's order", strings.Join(set, " and "), first.Title())
}

// count is a small number in words.
func count(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five"}
	if n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

// endpointWhy says what named the endpoint or the key's variable.
func (c *Config) endpointWhy() string {
	switch {
	case c.src.baseURLGiven:
		return c.src.baseURLWhy
	case c.urlGiven():
		return "--base-url is given"
	}
	return c.src.keyEnvWhy
}

// checkProvider is Validate's part for the provider: the model that needs
// a key nobody set, and a project's provider that would send a key
// somewhere the person did not choose.
func (c Config) checkProvider(u *url.URL) error {
	if c.Provider != "" {
		if _, ok := providers.Named(c.Provider); !ok {
			return invalidf("provider %q is not one ralph knows; use one of %s", c.Provider, ProviderNames())
		}
	}
	if c.ThinkingTokens < 0 {
		return invalidf("thinking_tokens must not be negative, not %d", c.ThinkingTokens)
	}
	if c.ThinkingTokens > 0 && c.ThinkingTokens < 1024 {
		return invalidf("thinking_tokens must be at least 1024, the smallest budget Anthropic takes, not %d", c.ThinkingTokens)
	}
	if c.src.modelNeedsKey != "" && c.APIKey == "" && !IsLocalURL(u) {
		p, _ := providers.Named(c.src.modelNeedsKey)
		return noKeyf("the model %s is %s's and %s is not set; export %s, or name a provider (--provider) or an endpoint (--base-url) that serves it",
			c.Model, p.Title(), p.KeyEnv, p.KeyEnv)
	}
	if c.src.providerFromProject && c.APIKey != "" && !IsLoopbackURL(u) {
		p, _ := providers.Named(c.Provider)
		own := sameEndpoint(c.BaseURL, p.BaseURL) || (p.BaseURLEnv != "" && c.baseURLFromEnv(p.BaseURLEnv))
		if !own || (c.APIKeyEnv != p.KeyEnv && c.APIKeyEnv != p.TokenEnv) {
			// A cloned repository names the provider: it may have the
			// provider's own key go to the provider's own endpoint, no
			// more.
			return invalidf("the project's %s names the provider %s, which would send your %s to %s; name the provider with --provider or your user config if you trust it", ProjectFile, c.Provider, c.APIKeyEnv, u.Host)
		}
	}
	return nil
}

// baseURLFromEnv reports whether the endpoint is the one the person's own
// variable env names.
func (c Config) baseURLFromEnv(env string) bool {
	getenv := c.src.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	v := getenv(env)
	return v != "" && sameEndpoint(c.BaseURL, v)
}

// noKeyHint is the no-key sentence's end: the provider's variable, and
// the other providers' for a person who has one of those instead.
func (c Config) noKeyHint() string {
	var others []string
	for _, p := range providers.All() {
		if p.KeyEnv != "" && p.KeyEnv != c.APIKeyEnv {
			others = append(others, p.KeyEnv+" ("+p.Name+")")
		}
	}
	return fmt.Sprintf("export %s, or another provider's key (%s) with nothing else configured, or point --base-url at a local server such as Ollama",
		c.APIKeyEnv, strings.Join(others, ", "))
}

// displayPath is path with the home directory written as ~, for the
// sentences a person reads.
func displayPath(path string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return path
}

// fallbackNames are the fallback models' names as written.
func (c *Config) fallbackNames() []string {
	out := make([]string, 0, len(c.Fallback.FallbackModels))
	for _, m := range c.Fallback.FallbackModels {
		out = append(out, m.Name)
	}
	return out
}

// familyNames are the names tool_family takes.
func familyNames() []string {
	out := []string{providers.FamilyRalph.Name()}
	for _, f := range providers.Families() {
		out = append(out, f.Name())
	}
	return out
}
