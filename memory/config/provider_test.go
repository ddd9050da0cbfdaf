package config

import (
	"errors"
	"strings"
	"testing"
)

// The resolution of the shared contract of issue 60: a provider named
// wins; a base URL or api_key_env given anywhere keeps today's path;
// ANTHROPIC_BASE_URL alone is Anthropic there; else the model's provider
// when its key is set, else the first key in OpenAI, Anthropic, Gemini,
// OpenRouter order.
func TestResolveProvider(t *testing.T) {
	const userOpenAIURL = "base_url = \"https://gw.example/v1\"\n"
	tests := []struct {
		name     string
		files    map[string]string
		env      env
		flags    func(c *Config)
		provider string
		protocol string
		baseURL  string
		keyEnv   string
		model    string
		bearer   bool
		why      string
	}{
		{name: "only an Anthropic key", env: env{"ANTHROPIC_API_KEY": "sk-ant"},
			provider: "anthropic", protocol: "anthropic", baseURL: "https://api.anthropic.com", keyEnv: "ANTHROPIC_API_KEY",
			model: "claude-sonnet-4-5", why: "only ANTHROPIC_API_KEY is set"},
		{name: "only an Anthropic token", env: env{"ANTHROPIC_AUTH_TOKEN": "tok"},
			provider: "anthropic", protocol: "anthropic", baseURL: "https://api.anthropic.com", keyEnv: "ANTHROPIC_AUTH_TOKEN",
			model: "claude-sonnet-4-5", bearer: true, why: "only ANTHROPIC_AUTH_TOKEN is set"},
		{name: "both keys, nothing named", env: env{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-ant"},
			provider: "openai", protocol: "openai", baseURL: DefaultBaseURL, keyEnv: "OPENAI_API_KEY",
			model: DefaultModel, why: "two keys are set and nothing names a provider: OpenAI, as before"},
		{name: "both keys and a claude model", env: env{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-ant"},
			flags:    func(c *Config) { c.SetModel("claude-opus-4-1") },
			provider: "anthropic", protocol: "anthropic", baseURL: "https://api.anthropic.com", keyEnv: "ANTHROPIC_API_KEY",
			model: "claude-opus-4-1", why: "the model claude-opus-4-1 is Anthropic's and ANTHROPIC_API_KEY is set"},
		{name: "OPENAI_BASE_URL keeps to it", env: env{"OPENAI_BASE_URL": "http://localhost:4000/v1", "ANTHROPIC_API_KEY": "sk-ant"},
			flags:    func(c *Config) { c.SetModel("claude-sonnet-4-5") },
			provider: "", protocol: "openai", baseURL: "http://localhost:4000/v1", keyEnv: "OPENAI_API_KEY",
			model: "claude-sonnet-4-5", why: "OPENAI_BASE_URL is set, so ralph keeps to that endpoint"},
		{name: "a user base_url keeps to it", files: map[string]string{userFile: userOpenAIURL}, env: env{"ANTHROPIC_API_KEY": "sk-ant"},
			provider: "", protocol: "openai", baseURL: "https://gw.example/v1", keyEnv: "OPENAI_API_KEY",
			model: DefaultModel, why: "base_url is set in " + userFile + ", so ralph keeps to that endpoint"},
		{name: "the --base-url flag keeps to it", env: env{"ANTHROPIC_API_KEY": "sk-ant"},
			flags:    func(c *Config) { c.SetBaseURL("http://localhost:8080/v1") },
			provider: "", protocol: "openai", baseURL: "http://localhost:8080/v1", keyEnv: "OPENAI_API_KEY",
			model: DefaultModel, why: "--base-url is given, so ralph keeps to that endpoint"},
		{name: "ANTHROPIC_BASE_URL alone", env: env{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/", "ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-o"},
			provider: "anthropic", protocol: "anthropic", baseURL: "http://127.0.0.1:9/", keyEnv: "ANTHROPIC_API_KEY",
			model: "claude-sonnet-4-5", why: "ANTHROPIC_BASE_URL is set and nothing else names an endpoint, so ralph speaks Anthropic's Messages API there"},
		{name: "--provider gemini", env: env{"OPENAI_API_KEY": "sk-o", "GEMINI_API_KEY": "g"},
			flags:    func(c *Config) { c.Apply(ProviderSetting, "gemini", FromFlag) },
			provider: "gemini", protocol: "openai", baseURL: "https://generativelanguage.googleapis.com/v1beta/openai", keyEnv: "GEMINI_API_KEY",
			model: "gemini-2.5-flash", why: "--provider gemini"},
		{name: "--provider anthropic with --base-url", env: env{"ANTHROPIC_API_KEY": "sk-ant"},
			flags: func(c *Config) {
				c.Apply(ProviderSetting, "anthropic", FromFlag)
				c.SetBaseURL("http://localhost:7/")
			},
			provider: "anthropic", protocol: "anthropic", baseURL: "http://localhost:7/", keyEnv: "ANTHROPIC_API_KEY",
			model: "claude-sonnet-4-5", why: "--provider anthropic"},
		{name: "--provider anthropic with OPENAI_BASE_URL set", env: env{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_BASE_URL": "http://localhost:4000/v1"},
			flags:    func(c *Config) { c.Apply(ProviderSetting, "anthropic", FromFlag) },
			provider: "anthropic", protocol: "anthropic", baseURL: "https://api.anthropic.com", keyEnv: "ANTHROPIC_API_KEY",
			model: "claude-sonnet-4-5", why: "--provider anthropic"},
		{name: "--provider openai with OPENAI_BASE_URL set", env: env{"OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://localhost:4000/v1"},
			flags:    func(c *Config) { c.Apply(ProviderSetting, "openai", FromFlag) },
			provider: "openai", protocol: "openai", baseURL: "http://localhost:4000/v1", keyEnv: "OPENAI_API_KEY",
			model: DefaultModel, why: "--provider openai"},
		{name: "provider in the user config", files: map[string]string{userFile: "provider = \"openrouter\"\n"}, env: env{"OPENROUTER_API_KEY": "or", "OPENAI_API_KEY": "sk-o"},
			provider: "openrouter", protocol: "openai", baseURL: "https://openrouter.ai/api/v1", keyEnv: "OPENROUTER_API_KEY",
			model: "anthropic/claude-sonnet-4.5", why: "provider = \"openrouter\" in " + userFile},
		{name: "RALPH_PROVIDER", env: env{"RALPH_PROVIDER": "ollama"},
			provider: "ollama", protocol: "openai", baseURL: "http://localhost:11434/v1", keyEnv: "OPENAI_API_KEY",
			model: "qwen2.5-coder", why: "RALPH_PROVIDER=ollama"},
		{name: "a gemini model with only its key", env: env{"GEMINI_API_KEY": "g"},
			flags:    func(c *Config) { c.SetModel("gemini-2.5-pro") },
			provider: "gemini", protocol: "openai", baseURL: "https://generativelanguage.googleapis.com/v1beta/openai", keyEnv: "GEMINI_API_KEY",
			model: "gemini-2.5-pro", why: "the model gemini-2.5-pro is Google's and GEMINI_API_KEY is set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, tt.files, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if tt.flags != nil {
				tt.flags(&c)
				if err := c.Resolve(); err != nil {
					t.Fatal(err)
				}
			}
			got := []any{c.Provider, c.Protocol, c.BaseURL, c.APIKeyEnv, c.Model, c.Bearer, c.ProviderWhy}
			want := []any{tt.provider, tt.protocol, tt.baseURL, tt.keyEnv, tt.model, tt.bearer, tt.why}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("got  %q\nwant %q", got, want)
					break
				}
			}
			if c.APIKey != tt.env[c.APIKeyEnv] {
				t.Errorf("key %q, want the value of %s", c.APIKey, c.APIKeyEnv)
			}
		})
	}
}

// Resolve runs again after the flags and starts from what the sources
// said: a flag's base URL after an inferred Anthropic goes back to
// today's path with today's model.
func TestResolveAgainAfterFlags(t *testing.T) {
	c, err := load(t, nil, env{"ANTHROPIC_API_KEY": "sk-ant"})
	if err != nil || c.Provider != "anthropic" {
		t.Fatalf("%v %q", err, c.Provider)
	}
	c.SetBaseURL("http://localhost:1/v1")
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if c.Provider != "" || c.Protocol != "openai" || c.Model != DefaultModel || c.APIKeyEnv != "OPENAI_API_KEY" || c.APIKey != "" {
		t.Errorf("%q %q %q %q %q", c.Provider, c.Protocol, c.Model, c.APIKeyEnv, c.APIKey)
	}
	if err := c.Resolve(); err != nil || c.Model != DefaultModel || c.BaseURL != "http://localhost:1/v1" {
		t.Errorf("a second Resolve changed it: %v %q %q", err, c.Model, c.BaseURL)
	}
	// OPENAI_BASE_URL is set aside for a provider other than OpenAI's,
	// and back when OpenAI is named after all.
	c, _ = load(t, nil, env{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_BASE_URL": "http://localhost:4000/v1", "RALPH_PROVIDER": "anthropic"})
	if c.BaseURL != "https://api.anthropic.com" {
		t.Errorf("anthropic with OPENAI_BASE_URL: %q", c.BaseURL)
	}
	c.Apply(ProviderSetting, "openai", FromFlag)
	if err := c.Resolve(); err != nil || c.BaseURL != "http://localhost:4000/v1" || c.Protocol != "openai" {
		t.Errorf("openai after: %v %q %q", err, c.BaseURL, c.Protocol)
	}
	// A field written directly (a worker's carried settings) counts as
	// given for every Resolve after.
	c, _ = load(t, nil, env{"ANTHROPIC_API_KEY": "sk-ant"})
	c.Model = "claude-opus-4-1"
	for i := 0; i < 2; i++ {
		if err := c.Resolve(); err != nil || c.Model != "claude-opus-4-1" || c.Provider != "anthropic" {
			t.Errorf("Resolve %d: %v %q %q", i, err, c.Model, c.Provider)
		}
	}
}

// A claude model with nothing configured and no Anthropic key is one
// sentence naming ANTHROPIC_API_KEY; no key at all names the provider's
// variable and the others'.
func TestProviderKeyErrors(t *testing.T) {
	c, err := load(t, nil, env{"OPENAI_API_KEY": "sk-o", "RALPH_MODEL": "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "the model claude-sonnet-4-5 is Anthropic's and ANTHROPIC_API_KEY is not set; export ANTHROPIC_API_KEY") {
		t.Errorf("got %v", err)
	}
	c, _ = load(t, nil, env{})
	err = c.Validate()
	for _, want := range []string{"OPENAI_API_KEY is not set", "ANTHROPIC_API_KEY (anthropic)", "GEMINI_API_KEY (gemini)", "OPENROUTER_API_KEY (openrouter)"} {
		if !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), want) {
			t.Errorf("no key: %v, want it to name %s", err, want)
		}
	}
}

// An unknown provider is one sentence listing the names, from a file
// (at load) or a flag (at Resolve).
func TestUnknownProvider(t *testing.T) {
	_, err := load(t, map[string]string{userFile: "provider = \"bedrock\"\n"}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "openai, anthropic, gemini, openrouter or ollama") {
		t.Errorf("file: %v", err)
	}
	c, _ := load(t, nil, env{})
	c.Apply(ProviderSetting, "bedrock", FromFlag)
	err = c.Resolve()
	if !errors.Is(err, ErrInvalid) || err.Error() != `--provider bedrock names the provider "bedrock", which ralph does not know; use one of openai, anthropic, gemini, openrouter or ollama` {
		t.Errorf("flag: %v", err)
	}
}

// A project's provider is a cloned repository's choice: it may have the
// provider's own key go to the provider's own endpoint, not the key the
// person named with api_key_env, nor to the endpoint the person's config
// names for something else.
func TestProjectProviderDoesNotRedirectTheKey(t *testing.T) {
	c, err := load(t, map[string]string{projectFile: "provider = \"gemini\"\n"}, env{"GEMINI_API_KEY": "g"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil || c.Provider != "gemini" {
		t.Errorf("the provider's own key to its own endpoint: %v %q", err, c.Provider)
	}
	c, err = load(t, map[string]string{userFile: "api_key_env = \"MY_KEY\"\n", projectFile: "provider = \"openrouter\"\n"}, env{"MY_KEY": "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "would send your MY_KEY to openrouter.ai") {
		t.Errorf("api_key_env's key to the project's provider: %v", err)
	}
	c, err = load(t, map[string]string{userFile: "base_url = \"https://gw.example/v1\"\n", projectFile: "provider = \"anthropic\"\n"}, env{"ANTHROPIC_API_KEY": "sk-ant"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "gw.example") {
		t.Errorf("the project's provider at the person's gateway: %v", err)
	}
	// The person's own config naming the same provider makes it theirs.
	c, err = load(t, map[string]string{userFile: "provider = \"anthropic\"\nbase_url = \"https://gw.example\"\n", projectFile: "provider = \"anthropic\"\n"}, env{"ANTHROPIC_API_KEY": "sk-ant"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the person's own provider: %v", err)
	}
}

// thinking_tokens comes from the config or MAX_THINKING_TOKENS, and a
// budget below Anthropic's smallest is refused.
func TestThinkingTokens(t *testing.T) {
	c, err := load(t, map[string]string{userFile: "thinking_tokens = 4096\n"}, env{"ANTHROPIC_API_KEY": "k"})
	if err != nil || c.ThinkingTokens != 4096 {
		t.Fatalf("%v %d", err, c.ThinkingTokens)
	}
	c, err = load(t, nil, env{"ANTHROPIC_API_KEY": "k", "MAX_THINKING_TOKENS": "2048"})
	if err != nil || c.ThinkingTokens != 2048 || c.Validate() != nil {
		t.Fatalf("%v %d", err, c.ThinkingTokens)
	}
	c.ThinkingTokens = 100
	if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "at least 1024") {
		t.Errorf("%v", err)
	}
	if _, err := load(t, nil, env{"MAX_THINKING_TOKENS": "lots"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("%v", err)
	}
}

// Claude Code's aliases map to the current model of the family where the
// provider serves Claude, again after each Resolve; elsewhere they are
// refused in one sentence; ANTHROPIC_MODEL takes the place of the
// Anthropic provider's default, never of a model given (issue 68).
func TestResolveAliasesAndAnthropicModel(t *testing.T) {
	c, err := load(t, nil, env{"ANTHROPIC_API_KEY": "sk-ant", "RALPH_MODEL": "opus"})
	if err != nil || c.Model != "claude-opus-4-1" {
		t.Fatalf("opus on anthropic: %v %q", err, c.Model)
	}
	if err := c.Resolve(); err != nil || c.Model != "claude-opus-4-1" {
		t.Fatalf("again: %v %q", err, c.Model)
	}
	c.Apply(ProviderSetting, "openrouter", FromFlag)
	if err := c.Resolve(); err != nil || c.Model != "anthropic/claude-opus-4.1" {
		t.Fatalf("opus on openrouter: %v %q", err, c.Model)
	}
	c.Apply(ProviderSetting, "openai", FromFlag)
	if err := c.Resolve(); err == nil || c.Model != "opus" || !errors.Is(err, ErrInvalid) {
		t.Fatalf("opus on openai: %v %q", err, c.Model)
	}
	c, err = load(t, nil, env{"OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://localhost:4000/v1", "RALPH_MODEL": "sonnet"})
	if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `the model "sonnet" is Claude Code's alias`) || strings.Count(err.Error(), ". ") > 0 {
		t.Fatalf("sonnet on an OpenAI-compatible endpoint: %v", err)
	}
	c, err = load(t, nil, env{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_MODEL": "claude-haiku-4-5"})
	if err != nil || c.Model != "claude-haiku-4-5" {
		t.Fatalf("ANTHROPIC_MODEL: %v %q", err, c.Model)
	}
	c, err = load(t, nil, env{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_MODEL": "haiku"})
	if err != nil || c.Model != "claude-haiku-4-5" {
		t.Fatalf("ANTHROPIC_MODEL=haiku: %v %q", err, c.Model)
	}
	c.SetModel("claude-opus-4-1")
	if err := c.Resolve(); err != nil || c.Model != "claude-opus-4-1" {
		t.Fatalf("--model over ANTHROPIC_MODEL: %v %q", err, c.Model)
	}
	c, err = load(t, nil, env{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_MODEL": "claude-haiku-4-5"})
	if err != nil || c.Model != DefaultModel {
		t.Fatalf("ANTHROPIC_MODEL on OpenAI: %v %q", err, c.Model)
	}
}
