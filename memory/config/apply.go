package config

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/providers"
)

// A Setting is one of the settings a person gives from several places: a
// flag (scripts' settings table), an environment variable (Load), and a
// run carried to a Temporal worker (remote.Session.Tighten). Apply is the
// one way each is put over a configuration, so that the same value means
// the same wherever it came from: the provider's name in lower case, a
// model given counting as given (Resolve keeps it over a provider's
// default), a base URL given setting aside what the project's file said.
// A worker's refusals of what would loosen it (remote.Session.Tighten) and
// a flag's parsing stay with them; only the putting over is here.
type Setting struct {
	// Key is the config file's key; Flag the flag's long name; Env the
	// variable that sets it.
	Key, Flag, Env string
}

// The settings applied from several places.
var (
	ProviderSetting = Setting{Key: "provider", Flag: "provider", Env: "RALPH_PROVIDER"}
	ModelSetting    = Setting{Key: "model", Flag: "model", Env: "RALPH_MODEL"}
	BaseURLSetting  = Setting{Key: "base_url", Flag: "base-url", Env: providers.OpenAIBaseURLEnv}
)

// Origin is where a setting's value came from.
type Origin int

const (
	// FromFlag is the command line of this ralph.
	FromFlag Origin = iota
	// FromEnv is the setting's variable in ralph's environment.
	FromEnv
	// FromRun is a run's starter, whose flags a Temporal worker takes.
	FromRun
)

// why is the sentence part that says the setting holds value because of
// from, as `ralph config` and the provider's reason show it:
// "--provider anthropic", "RALPH_PROVIDER=anthropic", "--provider
// anthropic (carried by the run)".
func (from Origin) why(s Setting, value string) string {
	switch from {
	case FromEnv:
		return s.Env + "=" + value
	case FromRun:
		return "--" + s.Flag + " " + value + " (carried by the run)"
	}
	return "--" + s.Flag + " " + value
}

// Apply puts value over c as the setting s, from origin from; "" changes
// nothing. Resolve then settles the provider, endpoint, key and model
// from what was applied.
func (c *Config) Apply(s Setting, value string, from Origin) {
	if value == "" {
		return
	}
	switch s {
	case ProviderSetting:
		c.setProvider(strings.ToLower(strings.TrimSpace(value)), from.why(s, value))
	case ModelSetting:
		c.SetModel(value)
	case BaseURLSetting:
		c.SetBaseURL(value)
		if from == FromEnv {
			// OpenAI's own variable: a provider named other than OpenAI
			// sets it aside (resolve).
			c.src.baseURLWhy, c.src.urlFromOpenAIEnv, c.src.openAIEnvURL = s.Env+" is set", true, value
		}
	}
}
