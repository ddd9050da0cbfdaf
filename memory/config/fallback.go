package config

import "github.com/ralph-dev/ralph/memory/text"

// MaxFallbackModels is how many fallback models a session may name, as
// Claude Code's one fallbackModel and the "up to three" have it:
// a longer chain only delays the error a person must see.
const MaxFallbackModels = 3

// FallbackFile is the fallback part of a config file's schema.
type FallbackFile struct {
	// FallbackModels are the models a turn goes to, in order, when the
	// session's model is overloaded or unavailable; an entry
	// "provider:model" names another provider.
	FallbackModels []string `toml:"fallback_models"`
	// FallbackOnLimit lets a rate or usage limit that outlasts a call's
	// own retries move the turn to the next model instead of waiting.
	FallbackOnLimit *bool `toml:"fallback_on_limit"`
}

// Fallback is the resolved fallback part of a configuration.
type Fallback struct {
	// FallbackModels are the fallback models, from the last file or flag
	// that names any (a later list replaces an earlier one, as model
	// does).
	FallbackModels []FallbackModel
	// FallbackOnLimit: see FallbackFile.
	FallbackOnLimit bool
}

// FallbackModel is one fallback model and where it was named.
type FallbackModel struct {
	// Name is the entry as written: "gpt-4o" or "gemini:gemini-2.5-pro".
	Name string `json:"name"`
	// Project: a project's config named it. Such an entry may only name
	// a model of the session's own provider: a cloned repository must not
	// send the person's other keys anywhere.
	Project bool `json:"project,omitempty"`
}

// FallbackNames are the fallback models' names, as written.
func (f Fallback) FallbackNames() []string {
	out := make([]string, len(f.FallbackModels))
	for i, m := range f.FallbackModels {
		out[i] = m.Name
	}
	return out
}

// SetFallbackModels puts models a person named (--fallback-model) over
// the configured ones.
func (f *Fallback) SetFallbackModels(names []string) {
	if len(names) == 0 {
		return
	}
	f.FallbackModels = f.FallbackModels[:0:0]
	for _, n := range names {
		f.FallbackModels = append(f.FallbackModels, FallbackModel{Name: n})
	}
}

// CheckFallbackModels refuses more fallback models than a session takes.
func (f Fallback) CheckFallbackModels() error {
	if n := len(f.FallbackModels); n > MaxFallbackModels {
		return invalidf("%s named (fallback_models, --fallback-model); a session takes at most %d", text.Counted(n, "fallback model is", "fallback models are"), MaxFallbackModels)
	}
	return nil
}

// applyFallback reads a config file's fallback settings.
func (c *Config) applyFallback(f FallbackFile, path string, fromProject bool) error {
	if n := len(f.FallbackModels); n > MaxFallbackModels {
		return invalidf("%s: fallback_models names %s; a session takes at most %d", path, text.Counted(n, "model", "models"), MaxFallbackModels)
	}
	if f.FallbackModels != nil {
		c.FallbackModels = c.FallbackModels[:0:0]
		for _, n := range f.FallbackModels {
			if n == "" {
				return invalidf("%s: fallback_models has an empty name", path)
			}
			c.FallbackModels = append(c.FallbackModels, FallbackModel{Name: n, Project: fromProject})
		}
	}
	if f.FallbackOnLimit != nil {
		if fromProject && *f.FallbackOnLimit {
			// Whether a run spends another model's money instead of
			// waiting is the person's choice, not a repository's.
			return invalidf("%s: fallback_on_limit may only be set in your user config (%s), not in a project's config", path, "~/.config/ralph/config.toml")
		}
		c.FallbackOnLimit = *f.FallbackOnLimit
	}
	return nil
}
