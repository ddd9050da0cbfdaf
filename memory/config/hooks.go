package config

import (
	"encoding/json"
	"path/filepath"
)

// Hooks are written in ralph's config in Claude Code's shape, as TOML:
//
//	[[hooks.PreToolUse]]
//	matcher = "Bash"
//	hooks = [{ type = "command", command = "~/bin/guard.sh", timeout = 10 }]
//
// This package only reads the tables; workers/hooks parses them as it
// parses Claude Code's settings (HookTables.JSON gives it the same
// bytes), and coordinator/project decides which may run.

// HookGroupFile is one [[hooks.EVENT]] table: a matcher and its hooks.
type HookGroupFile struct {
	Matcher string            `toml:"matcher" json:"matcher,omitempty"`
	Hooks   []HookCommandFile `toml:"hooks" json:"hooks"`
}

// HookCommandFile is one hook of a group.
type HookCommandFile struct {
	Type    string   `toml:"type" json:"type"`
	Command string   `toml:"command" json:"command"`
	Timeout *float64 `toml:"timeout" json:"timeout,omitempty"`
	// Sandbox = false runs one of the person's own hooks outside the
	// sandbox (docs/sandbox.md); a project's hooks always run inside.
	Sandbox *bool `toml:"sandbox" json:"sandbox,omitempty"`
}

// HookTables are the [[hooks.EVENT]] tables of one config file.
type HookTables struct {
	// File is the config file that holds them; "" when none does.
	File   string
	Events map[string][]HookGroupFile
}

// JSON is the tables as Claude Code's settings write them ({"hooks":
// {...}}), for workers/hooks to parse; nil when there are none.
func (t HookTables) JSON() []byte {
	if len(t.Events) == 0 {
		return nil
	}
	data, err := json.Marshal(map[string]any{"hooks": t.Events})
	if err != nil {
		// Only strings, numbers and booleans: this cannot fail.
		return nil
	}
	return data
}

// applyHooks takes [[hooks.EVENT]] tables and claude_hooks from one
// config file.
func (c *Config) applyHooks(f File, path string, fromProject bool) error {
	if f.AgentSettingsHooks != nil {
		if fromProject {
			return invalidf("%s: claude_hooks may only be set in your user config (%s), not in a project's config", path, filepath.Join("~/.config/ralph", "config.toml"))
		}
		c.NoAgentSettingsHooks = !*f.AgentSettingsHooks
	}
	if len(f.Hooks) == 0 {
		return nil
	}
	for ev, groups := range f.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Timeout != nil && *h.Timeout < 0 {
					return invalidf("%s: hooks.%s: timeout must not be negative, not %v", path, ev, *h.Timeout)
				}
				if fromProject && h.Sandbox != nil && !*h.Sandbox {
					return invalidf("%s: hooks.%s: sandbox = false may only be set in your user config (%s): a project's hooks always run in the sandbox", path, ev, filepath.Join("~/.config/ralph", "config.toml"))
				}
			}
		}
	}
	t := HookTables{File: path, Events: f.Hooks}
	if fromProject {
		c.ProjectHooks = t
	} else {
		c.UserHooks = t
	}
	return nil
}
