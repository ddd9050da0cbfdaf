package remote

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/spf13/afero"
)

func worker() config.Config {
	return config.Config{Model: "w-model", BaseURL: "https://api.example/v1", Sandbox: "workspace-write", Network: true,
		MaxTurns: 50, MaxRetries: 4, CommandTimeout: 2 * time.Minute, IdleTimeout: time.Minute,
		Engine: config.Engine{AllowBaseURLs: []string{"http://10.0.0.5:8000/v1"}}}
}

func TestTightenTakesWhatTightens(t *testing.T) {
	cfg := worker()
	three := 3
	s := Session{Model: "m", Sandbox: "read-only", NoNetwork: true, MaxTurns: 7, MaxRetries: &three,
		CommandTimeout: time.Second, IdleTimeout: 10 * time.Second, MaxOutputTokens: 100, BaseURL: "http://10.0.0.5:8000/v1/"}
	if err := s.Tighten(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "m" || cfg.Sandbox != "read-only" || cfg.Network || cfg.MaxTurns != 7 || cfg.MaxRetries != 3 ||
		cfg.CommandTimeout != time.Second || cfg.IdleTimeout != 10*time.Second || cfg.MaxOutputTokens != 100 || cfg.BaseURL != "http://10.0.0.5:8000/v1/" {
		t.Fatalf("%+v", cfg)
	}
	// The worker's own endpoint needs no allowing.
	cfg = worker()
	if err := (Session{BaseURL: "https://API.example/v1/"}).Tighten(&cfg); err != nil {
		t.Fatal(err)
	}
}

func TestTightenRefusesWhatLoosens(t *testing.T) {
	ro := worker()
	ro.Sandbox = "read-only"
	ten := 10
	for name, c := range map[string]struct {
		s   Session
		cfg config.Config
	}{
		"an endpoint not allowed": {Session{BaseURL: "https://attacker.example/v1"}, worker()},
		"a looser sandbox":        {Session{Sandbox: "workspace-write"}, ro},
		"no sandbox":              {Session{Sandbox: "danger-full-access"}, worker()},
		"a sandbox that is none":  {Session{Sandbox: "off"}, worker()},
		"more turns":              {Session{MaxTurns: 51}, worker()},
		"more retries":            {Session{MaxRetries: &ten}, worker()},
		"a longer command":        {Session{CommandTimeout: time.Hour}, worker()},
	} {
		cfg := c.cfg
		err := c.s.Tighten(&cfg)
		if !errors.Is(err, ErrLoosens) || !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.Contains(err.Error(), "invalid configuration") || strings.Count(err.Error(), ": ") > 0 {
			t.Errorf("%s: not one sentence: %v", name, err)
		}
		if cfg.Sandbox != c.cfg.Sandbox || cfg.BaseURL != c.cfg.BaseURL || cfg.MaxTurns != c.cfg.MaxTurns {
			t.Errorf("%s: the config changed although the settings were refused: %+v", name, cfg)
		}
	}
}

func TestRefusedRun(t *testing.T) {
	if RefusedRun("claude", nil) != nil || RefusedRun("", nil) != nil {
		t.Fatal("a CLI agent is refused")
	}
	if RefusedRun("exec:./x.sh", nil) == nil || RefusedRun("claude", []string{"--dangerously-skip-permissions"}) == nil {
		t.Fatal("an exec: agent or --agent-arg went through")
	}
}

// A carried --provider is taken where the worker's own config names no
// endpoint: the worker then calls that provider's own endpoint with the
// key of its own environment. Where the worker's config names one, the
// provider would send the worker's key there under another name, and is
// refused; a thinking budget above the worker's own is refused too.
func TestTightenProvider(t *testing.T) {
	load := func(env map[string]string) config.Config {
		t.Helper()
		cfg, err := config.Load(config.Sources{Fs: afero.NewMemMapFs(), Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load(map[string]string{"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"})
	if err := (Session{Provider: "anthropic", ThinkingTokens: 2048}).Tighten(&cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Resolve(); err != nil || cfg.Provider != "anthropic" || cfg.APIKey != "a" || cfg.BaseURL != "https://api.anthropic.com" || cfg.ThinkingTokens != 2048 {
		t.Fatalf("%v %q %q %q %d", err, cfg.Provider, cfg.APIKey, cfg.BaseURL, cfg.ThinkingTokens)
	}
	cfg = load(map[string]string{"OPENAI_BASE_URL": "https://gw.example/v1", "ANTHROPIC_API_KEY": "a"})
	if err := (Session{Provider: "anthropic"}).Tighten(&cfg); !errors.Is(err, ErrLoosens) || cfg.Provider != "" {
		t.Errorf("a provider over the worker's own endpoint: %v, provider %q", err, cfg.Provider)
	}
	cfg = load(map[string]string{"ANTHROPIC_API_KEY": "a"})
	cfg.ThinkingTokens = 1024
	if err := (Session{ThinkingTokens: 4096}).Tighten(&cfg); !errors.Is(err, ErrLoosens) {
		t.Errorf("a bigger thinking budget: %v", err)
	}
}

// TestTightenAppliesAsTheCommandLineDoes: a worker puts a carried model
// and provider over its configuration by the same rules as the command
// line of a local run (config.Config.Apply), so that the same flags
// settle to the same provider and model on both hosts, even a model that
// is the worker's default (a model given is kept over the provider's
// own default) and a provider written in capitals.
func TestTightenAppliesAsTheCommandLineDoes(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"}
	load := func() config.Config {
		t.Helper()
		cfg, err := config.Load(config.Sources{Fs: afero.NewMemMapFs(), Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	local := load()
	local.Apply(config.ModelSetting, config.DefaultModel, config.FromFlag)
	local.Apply(config.ProviderSetting, "Anthropic", config.FromFlag)
	if err := local.Resolve(); err != nil {
		t.Fatal(err)
	}
	remote := load()
	if err := (Session{Model: config.DefaultModel, Provider: "Anthropic"}).Tighten(&remote); err != nil {
		t.Fatal(err)
	}
	if err := remote.Resolve(); err != nil {
		t.Fatal(err)
	}
	if remote.Provider != local.Provider || remote.Model != local.Model || remote.BaseURL != local.BaseURL || remote.APIKey != local.APIKey {
		t.Errorf("carried: %s %s %s; local: %s %s %s", remote.Provider, remote.Model, remote.BaseURL, local.Provider, local.Model, local.BaseURL)
	}
	if remote.ProviderWhy != "--provider Anthropic (carried by the run)" {
		t.Errorf("ProviderWhy = %q", remote.ProviderWhy)
	}
}
