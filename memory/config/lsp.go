package config

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// Language servers are configured in [lsp.NAME] tables beside three
// top-level keys: lsp_enabled = false turns every server off (the
// built-in ones too), lsp_wait bounds how long an edit tool waits for a
// server's diagnostics, and lsp_first_wait bounds the first wait of each
// server, which includes its start (gopls loading a module cold takes
// longer than 3s). They are top-level keys rather than keys of [lsp],
// whose every key is a server's name. A server the project's
// .ralph/config.toml defines is a program a file of the repository names:
// it is marked FromProject and starts only once the person approved it,
// exactly as a project's MCP server (workers/approval).

// Defaults of the language servers' waits.
const (
	DefaultLSPWait      = 3 * time.Second
	DefaultLSPFirstWait = 10 * time.Second
	// MaxLSPWait bounds both waits: an edit tool must come back.
	MaxLSPWait = 2 * time.Minute
)

// LSPServerFile is one [lsp.NAME] table.
type LSPServerFile struct {
	Command string   `toml:"command"`
	Args    []string `toml:"args"`
	// Filetypes are the extensions the server handles, without the dot.
	Filetypes []string `toml:"filetypes"`
	// RootMarkers are the files whose nearest directory above an edited
	// file is the server's root (go.mod).
	RootMarkers []string          `toml:"root_markers"`
	Env         map[string]string `toml:"env"`
	// Enabled = false switches off a server of that name (a built-in one
	// too).
	Enabled *bool `toml:"enabled"`
}

// LSPServer is one language server as the config files define it. A
// table that names a built-in server (workers/lsp) and leaves a field
// out keeps the built-in's value for it.
type LSPServer struct {
	Name        string
	Command     string
	Args        []string
	Filetypes   []string
	RootMarkers []string
	Env         map[string]string
	// Disabled: enabled = false.
	Disabled bool
	// Source is the file that defines the server.
	Source string
	// FromProject: the project's config defines it, so the person must
	// approve it on this machine before it starts.
	FromProject bool
}

// LSP are the language-server settings of a Config.
type LSP struct {
	// Off: lsp_enabled = false in a config file.
	Off bool
	// Wait and FirstWait bound the wait for a server's diagnostics after
	// an edit (lsp_wait, lsp_first_wait); 0 is the default (Waits).
	Wait, FirstWait time.Duration
	// Servers are the [lsp.NAME] tables of every file, merged by name (a
	// later file's table replaces an earlier one's).
	Servers []LSPServer
}

// Waits are the waits with the defaults in place of those not set: the
// first never shorter than the others.
func (l LSP) Waits() (wait, first time.Duration) {
	wait, first = l.Wait, l.FirstWait
	if wait <= 0 {
		wait = DefaultLSPWait
	}
	if first <= 0 {
		first = max(DefaultLSPFirstWait, wait)
	}
	return wait, first
}

// Runs is what the server runs: its command line.
func (s LSPServer) Runs() string { return strings.Join(append([]string{s.Command}, s.Args...), " ") }

// AsMCPServer is the server as the approval of a project's programs
// knows them (an MCP server ralph starts over stdio), so that a project's
// language server is approved, remembered and re-asked when its
// definition changes exactly as a project's MCP server is. Its name is
// "lsp.NAME", which no MCP server can have.
func (s LSPServer) AsMCPServer() MCPServer {
	m := MCPServer{Name: "lsp." + s.Name, Transport: TransportStdio, Command: s.Command, Args: s.Args, Env: s.Env,
		Enabled: !s.Disabled, Source: s.Source, FromProject: s.FromProject, language: true}
	m.written = MCPDefinition{Transport: TransportStdio, Command: s.Command, Args: s.Args, Env: s.Env}
	return m
}

// applyLSP takes one config file's language-server settings.
func (c *Config) applyLSP(f File, path string, fromProject bool) error {
	if f.LSPEnabled != nil && !*f.LSPEnabled {
		c.LSP.Off = true
	}
	if f.LSPEnabled != nil && *f.LSPEnabled && !fromProject {
		// The person's own file may turn them back on; a project's may
		// only turn them off.
		c.LSP.Off = false
	}
	for _, w := range []struct {
		key string
		v   any
		dst *time.Duration
	}{{"lsp_wait", f.LSPWait, &c.LSP.Wait}, {"lsp_first_wait", f.LSPFirstWait, &c.LSP.FirstWait}} {
		if w.v == nil {
			continue
		}
		d, err := parseSeconds(w.v)
		if err != nil || d <= 0 || d > MaxLSPWait {
			return invalidf("%s: %s must be a positive number of seconds or a duration such as \"3s\", at most %s", path, w.key, MaxLSPWait)
		}
		*w.dst = d
	}
	for _, name := range slices.Sorted(maps.Keys(f.LSP)) {
		t := f.LSP[name]
		if err := ValidServerName(name); err != nil {
			return invalidf("%s: language server: %v", path, err)
		}
		s := LSPServer{Name: name, Command: t.Command, Args: t.Args, Filetypes: trimDots(t.Filetypes), RootMarkers: t.RootMarkers,
			Env: t.Env, Disabled: t.Enabled != nil && !*t.Enabled, Source: path, FromProject: fromProject}
		c.LSP.Servers = slices.DeleteFunc(c.LSP.Servers, func(o LSPServer) bool { return o.Name == name })
		c.LSP.Servers = append(c.LSP.Servers, s)
	}
	return nil
}

// trimDots takes a leading dot off each extension (".go" is "go").
func trimDots(exts []string) []string {
	if exts == nil {
		return nil
	}
	out := make([]string, 0, len(exts))
	for _, e := range exts {
		if e = strings.TrimPrefix(strings.TrimSpace(e), "."); e != "" {
			out = append(out, e)
		}
	}
	return out
}
