package config

import (
	"testing"

	"github.com/spf13/afero"
)

// TestApplyIsTheSameFromEverySource: a provider, a model or a base URL
// put over a configuration by a flag, the environment or a run a worker
// takes settles to the same provider, protocol, endpoint, key and model;
// only the sentence saying why names the source.
func TestApplyIsTheSameFromEverySource(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g"}
	load := func() Config {
		t.Helper()
		c, err := Load(Sources{Fs: afero.NewMemMapFs(), Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	type settled struct{ provider, protocol, baseURL, key, model string }
	for _, tc := range []struct {
		name string
		give map[Setting]string
	}{
		{"provider in capitals", map[Setting]string{ProviderSetting: " Anthropic"}},
		{"the default model with a provider", map[Setting]string{ProviderSetting: "anthropic", ModelSetting: DefaultModel}},
		{"a model that picks its provider", map[Setting]string{ModelSetting: "gemini-2.5-pro"}},
		{"an endpoint", map[Setting]string{BaseURLSetting: "http://localhost:8080/v1", ModelSetting: "m"}},
	} {
		var first *settled
		for _, from := range []Origin{FromFlag, FromEnv, FromRun} {
			c := load()
			for _, s := range []Setting{BaseURLSetting, ModelSetting, ProviderSetting} {
				c.Apply(s, tc.give[s], from)
			}
			if err := c.Resolve(); err != nil {
				t.Fatalf("%s from %d: %v", tc.name, from, err)
			}
			got := settled{c.Provider, c.Protocol, c.BaseURL, c.APIKey, c.Model}
			if first == nil {
				first = &got
			} else if got != *first {
				t.Errorf("%s: from source %d it settles to %+v, from a flag to %+v", tc.name, from, got, *first)
			}
		}
	}
	for from, want := range map[Origin]string{FromFlag: "--provider Anthropic", FromEnv: "RALPH_PROVIDER=Anthropic", FromRun: "--provider Anthropic (carried by the run)"} {
		c := load()
		c.Apply(ProviderSetting, "Anthropic", from)
		if err := c.Resolve(); err != nil || c.ProviderWhy != want || c.Provider != "anthropic" {
			t.Errorf("from source %d: %v, provider %q because %q, want %q", from, err, c.Provider, c.ProviderWhy, want)
		}
	}
}
